import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Injectable,
  Param,
  Patch,
  Post,
  Query,
  Req,
  Res,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { Observable } from 'rxjs';
import { Authenticator } from '@app/auth';
import { ApiExtraModels, ApiTags, AppError, OperationContexts, type NewOperationContext } from '@app/common';
import { isRecordableActor } from './actor.js';
import { ErrorResponseDto } from './error-response.dto.js';
import type { OperationDescriptor, OperationInput, OperationSet } from './operation.js';
import { OperationDoors } from './operation-doors.js';

/**
 * Every REST call runs in an operation context naming the caller: authenticated (Authorization:
 * Bearer), then the principal's subject acts and X-Actor is only a note; with authentication off
 * the X-Actor header (or "api") acts, as before.
 */
@Injectable()
export class RestContextInterceptor implements NestInterceptor {
  constructor(private readonly authenticator: Authenticator) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    return new Observable((subscriber) => {
      this.context(req)
        // The request id (X-Request-Id or a new one) and trace id come from the HTTP door's context around this one.
        .then((operation) => OperationContexts.run(operation, () => next.handle().subscribe(subscriber)))
        .catch((error: unknown) => subscriber.error(error));
    });
  }

  private async context(req: Request): Promise<NewOperationContext> {
    const { principal } = await this.authenticator.forRequest(req);
    OperationContexts.learn({ subject: principal.subject });
    const claimed = actorOf(req);
    if (!this.authenticator.enabled) return { door: 'rest', actor: claimed ?? 'api', principal };
    return { door: 'rest', actor: principal.subject, principal, note: claimed };
  }
}

const ROUTES = { get: Get, post: Post, patch: Patch, delete: Delete } as const;

/** The prefix of every generated controller: a route's path is under it. */
export const REST_PREFIX = 'api/v1';

/** The URL path an operation's REST route is served at, its `:param`s as declared: /api/v1/agents/:namespace/:name. */
export function restPath(operation: OperationDescriptor): string {
  if (!operation.rest) throw new Error(`operation ${operation.name} has no REST route`);
  return `/${REST_PREFIX}/${operation.rest.path}`;
}

/**
 * What a request path must look like to reach a route path as express matches it: each `:param`
 * one segment, a trailing slash allowed, letters in any case (express's defaults).
 */
export function routePattern(path: string): RegExp {
  const segments = path.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
  return new RegExp(`^${segments.join('/')}/?$`, 'i');
}

/** The methods whose routes read a JSON body (a DELETE reads its arguments from the query and refuses a body). */
const BODY_METHODS = new Set(['post', 'patch']);

/**
 * The operation a request to a route with a body is served by, from the descriptors of these sets
 * (the routes their controllers serve), or undefined for any other request: what may be decided
 * before the body is read. A path two routes match goes to the one with fewer parameters
 * (`blueprints/validate` before a `blueprints/:name`).
 */
export function bodyRoutes(...sets: OperationSet[]): (method: string, path: string) => string | undefined {
  const routes = sets
    .flatMap((set) => set.operations)
    .filter((operation) => operation.rest !== undefined && BODY_METHODS.has(operation.rest.method))
    .map((operation) => ({ method: operation.rest!.method.toUpperCase(), pattern: routePattern(restPath(operation)), params: operation.rest!.path.split(':').length, operation: operation.name }))
    .sort((a, b) => a.params - b.params);
  return (method, path) => routes.find((route) => route.method === method && route.pattern.test(path))?.operation;
}

/**
 * The REST door of a module's operations: per OpenAPI tag, a controller under api/v1 with one
 * method per operation that has a route, decorated from its descriptor as a hand-written method
 * would be (Nest's route, @nestjs/swagger's documentation), each one line into OperationDoors.
 */
export function restControllers(set: OperationSet): Type<unknown>[] {
  const tags = [...new Set(set.operations.flatMap((operation) => (operation.rest ? [operation.rest.tag] : [])))];
  return tags.map((tag) => restController(tag, set.operations.filter((operation) => operation.rest?.tag === tag)));
}

function restController(tag: string, operations: OperationDescriptor[]): Type<unknown> {
  // Named for Nest's route log: AgentsController, AuditController, …
  const name = `${tag.replace(/(^|-)(\w)/g, (_m, _d, c: string) => c.toUpperCase())}Controller`;
  const generated = {
    [name]: class {
      constructor(readonly doors: OperationDoors) {}
    },
  }[name];
  Reflect.defineMetadata('design:paramtypes', [OperationDoors], generated);
  for (const operation of operations) route(generated.prototype, operation);
  UseInterceptors(RestContextInterceptor)(generated);
  Controller(REST_PREFIX)(generated);
  ApiExtraModels(ErrorResponseDto)(generated);
  ApiTags(tag)(generated);
  return generated;
}

/** One route: the handler, its parameters as Nest and swagger read them, then its decorators bottom-up. */
function route(prototype: object, operation: OperationDescriptor): void {
  const rest = operation.rest!;
  const key = operation.name;
  Object.defineProperty(prototype, key, {
    value: function (this: { doors: OperationDoors }, ...args: unknown[]) {
      return restCall(this.doors, operation, args.at(-2) as Request, args.at(-1) as Response);
    },
    writable: true,
    configurable: true,
  });
  const descriptor = Object.getOwnPropertyDescriptor(prototype, key)!;
  const parameters: ParameterDecorator[] = [
    ...(rest.path.includes(':') ? [Param()] : []),
    ...(rest.args === 'body' ? [Body()] : rest.args !== undefined ? [Query()] : []),
    Req(),
    Res({ passthrough: true }),
  ];
  Reflect.defineMetadata('design:type', Function, prototype, key);
  Reflect.defineMetadata('design:paramtypes', parameters.map(() => Object), prototype, key);
  Reflect.defineMetadata('design:returntype', Promise, prototype, key);
  parameters.forEach((decorate, index) => decorate(prototype, key, index));
  for (const decorate of [...rest.openapi].reverse()) decorate(prototype, key, descriptor);
  if (rest.status !== undefined) HttpCode(rest.status)(prototype, key, descriptor);
  ROUTES[rest.method](rest.path)(prototype, key, descriptor);
}

/**
 * One REST call: its input from the path, body or query, and the write headers as sent (data:
 * OperationDoors parses them for the operations that take them), through OperationDoors; then the
 * route's reply, data from the answer: status, ETag, Location, or a text instead of the JSON.
 */
async function restCall(doors: OperationDoors, operation: OperationDescriptor, req: Request, res: Response): Promise<unknown> {
  const rest = operation.rest!;
  if (rest.strict) {
    if (rest.args === 'body') bodyOnly(req);
    else queryOnly(req);
  }
  const query = (req.query ?? {}) as Record<string, unknown>;
  const args = rest.args === 'body' ? (req.body as unknown) : rest.args === 'query' ? req.query : rest.args?.(query, { body: req.body as unknown, headers: req.headers });
  const input: OperationInput = { path: req.params, args, headers: { idempotencyKey: req.header('idempotency-key'), ifMatch: req.header('if-match') } };
  const answer = await doors.run(operation, input);
  if (!rest.reply) return answer;
  const { status, etag, location, text } = rest.reply(answer, input);
  if (status !== undefined) res.status(status);
  if (etag !== undefined) res.setHeader('ETag', `"${etag}"`);
  if (location !== undefined) res.setHeader('Location', location);
  if (!text) return answer;
  res.setHeader('Content-Type', text.contentType);
  return text.text;
}

/** X-Actor as sent (UTF-8; Node hands headers over as latin1), refused when it cannot name anyone. */
function actorOf(req: Request): string | undefined {
  const raw = req.header('x-actor');
  if (raw === undefined) return undefined;
  const actor = decodeUtf8(raw).trim();
  if (actor.length === 0) return undefined; // an empty variable in a pipeline: as if left out
  if (!isRecordableActor(actor)) {
    throw AppError.invalid([{ path: 'X-Actor', message: 'X-Actor must be 1 to 253 printable characters naming who acts (a user or a pipeline), or be left out' }]);
  }
  return actor;
}

/** A header's bytes (Node reads them as latin1) as UTF-8 when they are UTF-8, else as they came. */
function decodeUtf8(raw: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(raw, 'latin1'));
  } catch {
    return raw;
  }
}

/**
 * A route reading its arguments from the query (DELETE): a body such as {"dryRun": true} would
 * be lost and the delete would run for real, so any body is refused, whatever its content type.
 */
function queryOnly(req: Request): void {
  const length = Number(req.headers['content-length'] ?? 0);
  if (length === 0 && req.headers['transfer-encoding'] === undefined) return;
  throw AppError.invalid([
    { path: 'body', message: `${req.method} reads its arguments from the query, not a body: send them as query parameters instead, e.g. ${req.path}?dryRun=true` },
  ]);
}

/**
 * Writes with a JSON body read nothing from the query: a ?dryRun=true there (or a misspelt
 * one) would be lost and the write would run for real, so any query parameter is refused.
 */
function bodyOnly(req: Request): void {
  const keys = Object.keys((req.query ?? {}) as Record<string, unknown>);
  if (keys.length === 0) return;
  throw AppError.invalid(
    keys.map((key) => ({ path: key, message: `query parameter "${key}" is not read on ${req.method} ${req.path}: send it in the JSON body instead, e.g. {"${key}": ...}` })),
  );
}
