import { randomUUID } from 'node:crypto';
import { AppError, type ErrorBody } from './app-error.js';

export interface MappedError {
  status: number;
  body: ErrorBody;
  /** Set for failures nobody anticipated: logged with the same id the caller sees. */
  unexpected?: unknown;
}

/** Maps anything thrown by a service method to the SPEC §6 body, for both doors. */
export function mapError(error: unknown): MappedError {
  if (error instanceof AppError) return { status: error.status, body: error.toBody() };
  const errorId = randomUUID();
  return {
    status: 500,
    body: {
      error: {
        code: 'internal',
        message: `unexpected failure ${errorId}; the service log has the details under this errorId`,
        details: [],
        errorId,
      },
    },
    unexpected: error,
  };
}
