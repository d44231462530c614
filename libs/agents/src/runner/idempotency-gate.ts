import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig, AppError, Caller, ERROR_STATUS, type ErrorBody } from '@app/common';
import { Metrics } from '@app/telemetry';
import { IdempotencyRepository } from '../persistence/idempotency.repository.js';
import { UncertainWrite } from './uncertain-write.js';

/** Refusals a retry with the same request would get again: kept as the idempotent answer (unless the environment caused them). */
const FINAL_REFUSALS = new Set(['invalid_request', 'not_found', 'precondition_failed']);

/** A key claimed for one run of a write. */
export interface ClaimedKey {
  /** The key as stored (scoped to the caller). */
  key: string;
}

/** What the write runner knows about a request's operations, for retries of it. */
export interface KeyHooks<T> {
  /** An earlier run of the request stopped with operation `operationId` pending: settle it under the agent's lease. */
  settle(operationId: string): Promise<void>;
  /** The answer re-derived from what operation `operationId` (an earlier run, which succeeded) recorded. */
  recorded(operationId: string): Promise<T>;
  /** Throws when a replayed answer no longer stands (its agent was deleted since). */
  replayed(answer: T, sent: string): Promise<void>;
}

/**
 * Answers a write once per idempotency key: the first request runs; a retry with the same request
 * gets the first answer (or waits for it while it runs, then 409 in progress); the same key with
 * another request is refused. The run links the key to the operation it journals (the runner passes
 * the key to the journal entry); once the run answers, the answer is kept. A retry that finds the
 * key's run stopped without an answer (its replica died, or the store failed while recording)
 * settles that operation from what helm holds and answers from what landed, or runs the write when
 * nothing did. Refusals the environment caused are never kept.
 */
@Injectable()
export class IdempotencyGate {
  private readonly logger = new Logger(IdempotencyGate.name);

  constructor(
    private readonly config: AppConfig,
    private readonly keys: IdempotencyRepository,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  async once<T>(caller: Caller, sent: string | undefined, request: unknown, run: (claimed?: ClaimedKey) => Promise<T>, hooks: KeyHooks<T>): Promise<T> {
    if (!sent) return run();
    const key = scopedKey(caller, sent);
    const hash = createHash('sha256').update(canonicalJson(request)).digest('hex');
    const keep = this.keepMs;
    const pending = this.config.LEASE_TTL_SECONDS * 1000;
    const deadline = Date.now() + (this.config.HELM_TIMEOUT_SECONDS + this.config.LEASE_TTL_SECONDS + 30) * 1000;
    for (let settled = 0; ; ) {
      const claim = await this.keys.claim(key, hash, pending);
      if (claim.kind === 'mismatch') {
        throw new AppError('conflict', `idempotency key "${sent}" was already used for a different request: send a new key for a new request, or resend the first request unchanged`, [
          { path: 'requestId', message: 'this key belongs to another request' },
        ]);
      }
      if (claim.kind === 'replay') {
        this.metrics?.idempotencyReplay(operationOf(request));
        return this.replay(sent, claim.answer.body, hooks);
      }
      if (claim.kind === 'claimed') break;
      if (claim.expired) {
        const op = claim.operation;
        if (op?.state === 'pending' && settled++ < 3) {
          await hooks.settle(op.id); // records or fails it from what helm holds; throws 409 while helm cannot tell
          continue;
        }
        if (op?.state === 'succeeded') {
          const answer = await hooks.recorded(op.id);
          await this.keys.complete(key, { status: 200, body: { result: answer } }, keep, op.id);
          continue;
        }
        if (op?.state !== 'pending' && (await this.keys.takeOver(key, op?.id ?? null, pending))) break;
      }
      if (Date.now() > deadline || settled > 3) throw new AppError('conflict', `a request with idempotency key "${sent}" is still in progress: retry later with the same key`);
      await sleep(150);
    }
    const renew = setInterval(() => {
      this.keys.renew(key, pending).catch((error: unknown) => this.logger.warn(`renewing idempotency key ${key} failed: ${(error as Error).message}`));
    }, Math.max(250, Math.floor(pending / 3)));
    try {
      const answer = await run({ key });
      await this.keep(key, () => this.keys.complete(key, { status: 200, body: { result: answer } }, keep));
      return answer;
    } catch (error) {
      if (error instanceof UncertainWrite) await this.keep(key, () => this.keys.lapse(key));
      else if (error instanceof AppError && FINAL_REFUSALS.has(error.code) && !error.environmental) await this.keep(key, () => this.keys.complete(key, { status: error.status, body: error.toBody() }, keep));
      else await this.keep(key, () => this.keys.forget(key));
      throw error;
    } finally {
      clearInterval(renew);
    }
  }

  get keepMs(): number {
    return this.config.IDEMPOTENCY_TTL_SECONDS * 1000;
  }

  /** Removes answers past their time; the recovery sweep calls it. */
  purgeExpired(): Promise<number> {
    return this.keys.purgeExpired(this.keepMs);
  }

  /** A replayed answer, unless what it describes was deleted since (`hooks.replayed` says so). */
  private async replay<T>(sent: string, stored: unknown, hooks: KeyHooks<T>): Promise<T> {
    const answer = replay<T>(stored);
    await hooks.replayed(answer, sent);
    return answer;
  }

  /**
   * Bookkeeping of a key after its write: when the store fails here the write's own answer still
   * goes out, and the claim lapses by itself (a retry then settles it from the journal).
   */
  private async keep(key: string, work: () => Promise<unknown>): Promise<void> {
    await work().catch((error: unknown) => this.logger.warn(`idempotency key ${key}: ${(error as Error).message}; it lapses by itself`));
  }
}

/** A key as stored: scoped to who sent it (Caller.keyScope), hashed. */
export function scopedKey(caller: Caller, key: string): string {
  return `${createHash('sha256').update(Caller.keyScope(caller)).digest('hex')}:${key}`;
}

/** The write kind a hashed request names (create, update, delete, rollback), for the replay metric. */
function operationOf(request: unknown): string {
  const op = (request as { op?: unknown } | null)?.op;
  return typeof op === 'string' ? op : 'unknown';
}

function replay<T>(stored: unknown): T {
  const body = stored as { result?: T } & Partial<ErrorBody>;
  if (body.error) throw new AppError(body.error.code in ERROR_STATUS ? body.error.code : 'internal', body.error.message, body.error.details ?? []);
  return body.result as T;
}

/** JSON with sorted keys, so the same request hashes the same whatever its key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
