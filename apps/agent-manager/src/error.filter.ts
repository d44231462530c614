import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { AppError, mapError, type ErrorCode } from '@app/common';

const HTTP_CODES: Record<number, ErrorCode> = { 400: 'invalid_request', 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed' };

/** The one REST mapping of SPEC §6: every failure leaves as {"error": {code, message, details}}. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const mapped = mapError(fromFramework(exception));
    if (mapped.unexpected) {
      this.logger.error(`errorId=${mapped.body.error.errorId} ${(mapped.unexpected as Error)?.stack ?? String(mapped.unexpected)}`);
    }
    res.status(mapped.status).json(mapped.body);
  }
}

/** Express and Nest's own refusals (bad JSON, unknown route, oversized body) in our model. */
function fromFramework(exception: unknown): unknown {
  if (!(exception instanceof HttpException)) return exception;
  const status = exception.getStatus();
  const code = HTTP_CODES[status];
  if (!code) return status >= 500 ? exception : new AppError('invalid_request', exception.message);
  const message = status === 404 ? `no such route: see /docs or /api/v1/openapi.json for the API` : status === 400 ? `the request could not be read: ${exception.message}` : exception.message;
  return new AppError(code, message);
}
