import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import { AppError, type ErrorDetail } from '@app/common';
import { TOOLNAMES_REMOVED_MESSAGE, toolNamesViolations, validateToolset } from '@app/toolset';

type Input<T> = new () => T;

/** The argument names a DTO accepts, for refusals that say what is accepted instead. */
export function acceptedFields(cls: Input<unknown>): string[] {
  const metas = getMetadataStorage().getTargetValidationMetadatas(cls, '', true, false);
  return [...new Set(metas.map((m) => m.propertyName))].sort();
}

/**
 * Reads a request into its DTO with the rules of the DTO class, for both doors.
 * Returns every violation at once: removed arguments (toolNames, with the migration
 * text), unknown fields by name, field rules, and the toolset grammar's own messages.
 */
export function readInput<T extends object>(cls: Input<T>, raw: unknown): { value: T; violations: ErrorDetail[] } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { value: {} as T, violations: [{ path: '', message: 'the request must be a JSON object with the agent fields' }] };
  }
  const violations: ErrorDetail[] = [];
  const body = { ...(raw as Record<string, unknown>) };
  const accepts = acceptedFields(cls);
  if (accepts.includes('toolset')) {
    const removed = toolNamesViolations(body);
    violations.push(...removed.map(({ path, message }) => ({ path, message })));
    if (removed.length > 0) {
      delete body.toolNames;
      const muster = body.muster;
      if (typeof muster === 'object' && muster !== null && !Array.isArray(muster)) {
        const rest = Object.keys(muster).filter((k) => k !== 'toolNames');
        if (rest.length === 0) delete body.muster;
      }
    }
  }
  const value = plainToInstance(cls, body);
  const errors = validateSync(value, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  for (const error of errors) violations.push(...describe(error, accepts, body));
  return { value, violations };
}

/** readInput, throwing invalid_request when anything is wrong. */
export function parseInput<T extends object>(cls: Input<T>, raw: unknown): T {
  const { value, violations } = readInput(cls, raw);
  if (violations.length > 0) throw invalidInput(violations);
  return value;
}

export function invalidInput(violations: ErrorDetail[]): AppError {
  const summary = violations.some((v) => v.message === TOOLNAMES_REMOVED_MESSAGE) ? TOOLNAMES_REMOVED_MESSAGE : undefined;
  return AppError.invalid(violations, summary);
}

function describe(error: ValidationError, accepts: string[], body: Record<string, unknown>): ErrorDetail[] {
  const constraints = error.constraints ?? {};
  if (constraints.whitelistValidation) {
    return [{ path: error.property, message: `unknown field "${error.property}": remove it; accepted fields are ${accepts.join(', ')}` }];
  }
  if (constraints.isToolset) {
    return validateToolset(body[error.property], { field: error.property, required: true }).map(({ path, message }) => ({ path, message }));
  }
  if (body[error.property] === undefined) return [{ path: error.property, message: `${error.property} is required` }];
  return [...new Set(Object.values(constraints))].map((message) => ({ path: error.property, message }));
}
