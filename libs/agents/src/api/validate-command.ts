import type { ErrorDetail } from '@app/common';
import { ValidateAgentDto } from './requests.dto.js';
import { invalidInput, readInput } from '@app/doors';

/** A validate request: its violations are the answer, so it is read without throwing unless it cannot be read at all. */
export interface ValidateCommand {
  input: ValidateAgentDto;
  violations: ErrorDetail[];
}

export function readValidateCommand(raw: unknown): ValidateCommand {
  const { value, violations, unreadable } = readInput(ValidateAgentDto, raw);
  if (unreadable) throw invalidInput(violations);
  return { input: value, violations };
}
