/** The error model of docs/contract.md §6: one shape for REST bodies and MCP `isError` results. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  /** The release is applied from git by Flux or Argo CD (docs/contract.md §13): change it there. */
  gitops_owned: 409,
  precondition_failed: 412,
  internal: 500,
  backend_error: 502,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: ErrorDetail[]; errorId?: string };
}

/** At most this many problems are listed in one answer; a last entry says how many more there are. */
export const MAX_LISTED_PROBLEMS = 50;

/** `problems` as an answer lists them: the first MAX_LISTED_PROBLEMS, then one entry saying how many more. */
export function listedProblems<T extends ErrorDetail>(problems: readonly T[]): (T | ErrorDetail)[] {
  if (problems.length <= MAX_LISTED_PROBLEMS) return [...problems];
  const more = problems.length - MAX_LISTED_PROBLEMS;
  const listed: (T | ErrorDetail)[] = problems.slice(0, MAX_LISTED_PROBLEMS);
  listed.push({ path: '', message: `${more} more problem${more === 1 ? ' is' : 's are'} not listed (at most ${MAX_LISTED_PROBLEMS} are): fix these and send again to see the rest` });
  return listed;
}

/** Appends `items` one by one: `target.push(...items)` throws RangeError past ~120,000 items. */
export function append<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}

/** Retry-After of a 503 whose cause names no better time (every 503 carries one). */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/** A failure the caller can act on; anything else that escapes is `internal`. */
export class AppError extends Error {
  readonly details: ErrorDetail[];
  /** For `unavailable`: when a retry may succeed; REST sends it as `Retry-After` (DEFAULT_RETRY_AFTER_SECONDS unless given). */
  readonly retryAfterSeconds?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    details: ErrorDetail[] = [],
    retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.details = listedProblems(details);
    this.retryAfterSeconds = retryAfterSeconds ?? (code === 'unavailable' ? DEFAULT_RETRY_AFTER_SECONDS : undefined);
  }

  /**
   * Set on a refusal the environment caused, not the request (the cluster refused it, a namespace
   * is missing): the same request may succeed once that changed, so it is never kept as the
   * answer to an idempotency key.
   */
  environmental = false;

  /** Marks the refusal as caused by the environment (see `environmental`). */
  fromEnvironment(): this {
    this.environmental = true;
    return this;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  toBody(): ErrorBody {
    return { error: { code: this.code, message: this.message, details: this.details } };
  }

  static invalid(details: ErrorDetail[], summary?: string): AppError {
    const listed = details.slice(0, MAX_LISTED_PROBLEMS).map((d) => d.message);
    const more = details.length > MAX_LISTED_PROBLEMS ? `; and ${details.length - MAX_LISTED_PROBLEMS} more` : '';
    const message = summary ?? (details.length === 1 ? details[0].message : `${details.length} problems: ${listed.join('; ')}${more}`);
    return new AppError('invalid_request', message, details);
  }

  static notFound(namespace: string, name: string): AppError {
    return new AppError('not_found', `agent ${namespace}/${name} does not exist: list agents with GET /api/v1/agents (list_agents) to see what exists`);
  }
}
