import { ArgumentsHost, Catch, HttpException, Logger, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError, mapError, OperationContexts, type AppConfig, type ErrorCode } from '@app/common';
import { refuse } from '@app/mcp';
import { restChallenge } from './http-hardening.js';

const HTTP_CODES: Record<number, ErrorCode> = { 400: 'invalid_request', 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed' };

/** The one REST mapping of docs/contract.md §6: every failure leaves as {"error": {code, message, details}}. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  constructor(private readonly config: AppConfig) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse<Response>();
    const req = host.switchToHttp().getRequest<Request>();
    if (clientLeft(exception)) {
      // The client closed the connection while its body arrived: nobody reads an answer now.
      OperationContexts.learn({ outcome: 'aborted' });
      res.destroy();
      return;
    }
    if (/^\/mcp\/?$/.test(req.path) && isUnreadableBody(exception)) {
      // An MCP client reads JSON-RPC, not our REST model: malformed JSON is a JSON-RPC parse error.
      refuse(res, 400, `Parse error: the body is not a JSON object or array (${(exception as Error).message})`, -32700);
      return;
    }
    if (isTooLarge(exception)) {
      const message = `the request body is larger than ${this.config.BODY_LIMIT_BYTES} bytes (BODY_LIMIT_BYTES): send less, e.g. a shorter systemMessage`;
      res.status(413).json(AppError.invalid([{ path: 'body', message }]).toBody());
      return;
    }
    const failure = fromFramework(exception);
    const mapped = mapError(failure);
    if (mapped.unexpected) {
      const errorId = mapped.body.error.errorId;
      this.logger.error({ msg: `unexpected failure, errorId=${errorId}`, errorId, err: mapped.unexpected });
    }
    if (failure instanceof AppError && failure.code === 'unauthenticated') res.setHeader('WWW-Authenticate', restChallenge(this.config, failure));
    if (mapped.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(mapped.retryAfterSeconds));
    res.status(mapped.status).json(mapped.body);
  }
}

/** The body parser's "request aborted": the client went away before its body was read. */
function clientLeft(exception: unknown): boolean {
  const error = exception instanceof HttpException ? (exception.cause ?? exception) : exception;
  return (error as { type?: string } | null)?.type === 'request.aborted';
}

/** body-parser's refusal of a body over BODY_LIMIT_BYTES. */
function isTooLarge(exception: unknown): boolean {
  if (exception instanceof HttpException) return exception.getStatus() === 413;
  return (exception as { type?: string; status?: number } | null)?.type === 'entity.too.large';
}

/** body-parser's refusal of malformed JSON, as Nest hands it to filters. */
function isUnreadableBody(exception: unknown): boolean {
  if (!(exception instanceof HttpException) || exception.getStatus() !== 400) return false;
  const cause = exception.cause as { type?: string } | undefined;
  return cause?.type === 'entity.parse.failed' || exception.cause instanceof SyntaxError;
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
