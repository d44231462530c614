/** The error model of docs/contract.md §6: one shape for REST bodies and MCP `isError` results. */
export const ERROR_STATUS = {
  invalid_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
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

/** A failure the caller can act on; anything else that escapes is `internal`. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** For `unavailable`: when a retry may succeed; REST sends it as `Retry-After`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
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
    const message = summary ?? (details.length === 1 ? details[0].message : `${details.length} problems: ${details.map((d) => d.message).join('; ')}`);
    return new AppError('invalid_request', message, details);
  }

  static notFound(namespace: string, name: string): AppError {
    return new AppError('not_found', `agent ${namespace}/${name} does not exist: list agents with GET /api/v1/agents (list_agents) to see what exists`);
  }
}
