import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import { append, AppError, type ErrorDetail } from '@app/common';
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
export function readInput<T extends object>(cls: Input<T>, raw: unknown): { value: T; violations: ErrorDetail[]; unreadable: boolean } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { value: {} as T, violations: [{ path: '', message: 'the request must be a JSON object with the agent fields' }], unreadable: true };
  }
  const violations: ErrorDetail[] = shapeProblems(raw);
  if (violations.some((v) => v.message.startsWith(TOO_DEEP))) return { value: {} as T, violations, unreadable: true };
  const body = { ...(raw as Record<string, unknown>) };
  const accepts = acceptedFields(cls);
  if (accepts.includes('toolset')) {
    const removed = toolNamesViolations(body);
    append(violations, removed.map(({ path, message }) => ({ path, message })));
    if (removed.length > 0) {
      delete body.toolNames;
      const muster = body.muster;
      if (typeof muster === 'object' && muster !== null && !Array.isArray(muster)) {
        const rest = Object.keys(muster).filter((k) => k !== 'toolNames');
        if (rest.length === 0) delete body.muster;
      }
    }
  }
  const accepted = new Set(accepts);
  for (const key of Object.keys(body)) {
    if (accepted.has(key)) continue;
    violations.push(unknownField(key, accepts));
    delete body[key];
  }
  // class-transformer converts scalars (a query's limit "5" to 5) but mangles free-form maps: it
  // drops keys named like Object.prototype members (valueOf, toString) and throws on "constructor".
  // Objects and lists are taken as they came; the DTO's validators check them.
  const isData = (v: unknown) => typeof v === 'object' && v !== null;
  const scalars = Object.fromEntries(Object.entries(body).filter(([, v]) => !isData(v)));
  const value = plainToInstance(cls, scalars);
  for (const [key, v] of Object.entries(body)) {
    if (isData(v)) (value as Record<string, unknown>)[key] = v;
  }
  const errors = validateSync(value, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false });
  for (const error of errors) append(violations, describe(error, accepts, body));
  return { value, violations, unreadable: false };
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
  if (constraints.whitelistValidation) return [unknownField(error.property, accepts)];
  if (constraints.isToolset) {
    return validateToolset(body[error.property], { field: error.property, required: true }).map(({ path, message }) => ({ path, message }));
  }
  if (body[error.property] === undefined) return [{ path: error.property, message: `${error.property} is required` }];
  // The wrong type altogether: the rules for that type (lengths, ranges) would only add noise.
  const typeRules = TYPE_RULES.filter((rule) => constraints[rule]);
  if (typeRules.length > 0) {
    if (Array.isArray(error.value) && constraints.isString) return [{ path: error.property, message: `${error.property} was sent more than once or as a list: send one value` }];
    return typeRules.map((rule) => ({ path: error.property, message: constraints[rule] }));
  }
  return [...new Set(Object.values(constraints))].map((message) => ({ path: error.property, message }));
}

const TYPE_RULES = ['isString', 'isInt', 'isBoolean'];

function unknownField(key: string, accepts: string[]): ErrorDetail {
  return { path: key, message: `unknown field "${key}": remove it; accepted fields are ${accepts.join(', ')}` };
}

/** Deeper than any agent field goes (labels.key is 2): refused before anything walks it. */
const MAX_DEPTH = 8;
const TOO_DEEP = 'nested deeper than';
/**
 * Characters a chart value cannot carry, refused here by field instead of failing in helm or
 * changing on the way: DEL and the C1 controls reach the rendered manifest unescaped, where
 * YAML refuses them (NEL, U+0085, it folds into a space instead); U+FFFE, U+FFFF and unpaired
 * surrogates are not characters at all; NUL PostgreSQL cannot store. Tab, newline and the
 * other C0 controls are escaped on the way and arrive as sent.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNPRINTABLE = /[\u0000\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDFFF]/u; // with /u a surrogate class matches only unpaired ones

/** What no field may hold whatever its rules: nesting past MAX_DEPTH, characters a chart value cannot carry. */
function shapeProblems(raw: unknown): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const unprintable = (text: string, path: string, what: string) => {
    const found = UNPRINTABLE.exec(text);
    if (!found) return;
    const code = found[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    problems.push({ path, message: `${what} holds the character U+${code}, which a chart value cannot carry: remove it` });
  };
  const walk = (value: unknown, path: string, depth: number): void => {
    if (typeof value === 'string') return unprintable(value, path, path);
    if (typeof value !== 'object' || value === null) return;
    if (depth > MAX_DEPTH) {
      problems.push({ path, message: `${TOO_DEEP} ${MAX_DEPTH} levels: no agent field is; send the fields as documented` });
      return;
    }
    if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${path}[${i}]`, depth + 1));
    for (const [key, item] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      unprintable(key, at, `the key of ${at}`);
      walk(item, at, depth + 1);
    }
  };
  walk(raw, '', 0);
  return problems;
}
