import { isUtf8 } from 'node:buffer';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, Response } from 'express';
import { AgentAccess, bodyRoutes } from '@app/doors';
import { Authenticator, Authorizer, principalOf } from '@app/auth';
import { AppError, Caller } from '@app/common';
import { refuse } from '@app/mcp';
import { OPERATION_SETS } from './app.module.js';

/**
 * The operation of a REST route that takes a body (POST, PATCH), or undefined: read from the
 * descriptors of every operation set the app serves, so a route added there is covered here. A
 * caller granted that operation in no namespace is refused before the body is read (SPEC: bounded
 * work before authorization); the door decides again with the namespace once the body is read.
 */
export const bodyOperationOf = bodyRoutes(...OPERATION_SETS);

/**
 * Before any body is read (register before the body parser): on REST, a caller who cannot be
 * authenticated, or who is granted the route's operation in no namespace, is answered 401 or
 * 403 (journaled as every refusal is) without the body being parsed or validated; on /mcp
 * (after its bearer check), a principal granted nothing at all is answered 403. Nothing with
 * authentication off.
 */
export function refuseBeforeBody(app: NestExpressApplication): void {
  const authenticator = app.get(Authenticator);
  if (!authenticator.enabled) return;
  const authorizer = app.get(Authorizer);
  const access = app.get(AgentAccess);
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method === 'POST' && /^\/mcp\/?$/.test(req.path)) {
      const principal = principalOf((req as Request & { auth?: Parameters<typeof principalOf>[0] }).auth);
      if (principal === undefined || authorizer.grantsAnything(principal)) return next();
      return refuse(res, 403, `Forbidden: ${authorizer.nothingGranted(principal).message}`);
    }
    const operation = bodyOperationOf(req.method, req.path);
    if (operation === undefined || !authorizer.knows(operation)) return next();
    authenticator.forRequest(req).then(
      async ({ principal }) => {
        if (authorizer.isAllowed(principal, operation)) return next();
        // Journaled and worded as the controllers' own refusals (namespace "*": the body naming it was not read).
        const caller = { ...Caller.current(), door: 'rest' as const, actor: principal.subject, principal };
        await access.authorize(caller, operation).then(next, next);
      },
      (error: unknown) => next(error),
    );
  });
}

/** Marks a body that is not UTF-8, for rejectInvalidUtf8 (JSON.parse would read it with U+FFFD in place of the bad bytes). */
export function verifyUtf8(req: Request, _res: Response, body: Buffer): void {
  if (!isUtf8(body)) invalidUtf8.add(req);
}

const invalidUtf8 = new WeakSet<Request>();

/**
 * A JSON body with bytes that are not UTF-8 is refused naming the first field holding one (the
 * parser replaced them with U+FFFD), or the body, instead of storing the replacement character.
 */
export function rejectInvalidUtf8(app: NestExpressApplication): void {
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (!invalidUtf8.has(req)) return next();
    const path = replacedAt(req.body, '', 0);
    const where = path ? path : 'the request body';
    const message = `${where} is not valid UTF-8 (bytes that are no character were sent): send the text encoded as UTF-8`;
    if (/^\/mcp\/?$/.test(req.path)) return refuse(res, 400, `Parse error: ${message}`, -32700);
    next(AppError.invalid([{ path: path || 'body', message }]));
  });
}

/** Deeper than any field of the API: the search names the field it is inside. */
const MAX_SEARCH_DEPTH = 16;

/** The path of the first key or string holding U+FFFD, or undefined. */
function replacedAt(value: unknown, path: string, depth: number): string | undefined {
  if (typeof value === 'string') return value.includes('\uFFFD') ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (depth > MAX_SEARCH_DEPTH) return path;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const found = replacedAt(value[index], `${path}[${index}]`, depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\uFFFD')) return at;
    const found = replacedAt(item, at, depth + 1);
    if (found !== undefined) return found;
  }
  return undefined;
}
