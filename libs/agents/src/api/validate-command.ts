import type { ErrorDetail } from '@app/common';
import { CreateAgentDto, ValidateAgentDto } from './requests.dto.js';
import { invalidInput, readInput } from '@app/doors';

/** A validate request: its violations are the answer, so it is read without throwing unless it cannot be read at all. */
export interface ValidateCommand {
  input: ValidateAgentDto;
  violations: ErrorDetail[];
}

/**
 * Reads a validate request. A create's (mode create, the default) is also read as create_agent reads
 * its body, so the fields a create requires (modelConfig, toolset) are refused by the create's own
 * rules and words; only the fields the validation's reading did not flag are added from it.
 */
export function readValidateCommand(raw: unknown): ValidateCommand {
  const { value, violations, unreadable } = readInput(ValidateAgentDto, raw);
  if (unreadable) throw invalidInput(violations);
  if ((value.mode ?? 'create') === 'create') {
    const { mode: _mode, ...create } = raw as Record<string, unknown>;
    const flagged = new Set(violations.map((v) => v.path));
    violations.push(...readInput(CreateAgentDto, create).violations.filter((v) => !flagged.has(v.path)));
  }
  return { input: value, violations };
}
