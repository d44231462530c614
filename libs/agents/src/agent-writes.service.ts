import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig, AppError, ERROR_STATUS, OperationContexts, type ErrorBody } from '@app/common';
import { Store } from '@app/store';
import { Metrics } from '@app/telemetry';
import { AgentLeaseRepository, isRecoveryHolder, type LeaseHolder, type LeaseResult } from './agent-lease.repository.js';
import { IdempotencyRepository } from './idempotency.repository.js';

/** Set when the lease could not be renewed: another replica may hold the agent now. */
export interface HeldLease {
  lost: boolean;
}

/** How often a write waiting in line reads who holds the agent's lease. */
const LINE_POLL_MS = 100;

/** What a refused write tells the caller to wait before retrying when the store is down. */
const STORE_RETRY_SECONDS = 5;

/** Refusals a retry with the same request would get again: kept as the idempotent answer (unless the environment caused them). */
const FINAL_REFUSALS = new Set(['invalid_request', 'not_found', 'precondition_failed']);

/** A key claimed for one run of a write. */
export interface ClaimedKey {
  /** The key as stored (scoped to the caller). */
  key: string;
  keepMs: number;
  /** Set once the answer was stored with the write's outcome, in its transaction. */
  answered: boolean;
}

/** What the write pipeline knows about a request's operations, for retries of it. */
export interface KeyHooks<T> {
  /** An earlier run of the request stopped with operation `operationId` pending: settle it under the agent's lease. */
  settle(operationId: string): Promise<void>;
  /** The answer re-derived from what operation `operationId` (an earlier run, which succeeded) recorded. */
  recorded(operationId: string): Promise<T>;
  /** Throws when a replayed answer no longer stands (its agent was deleted since). */
  replayed(answer: T, sent: string): Promise<void>;
}

/**
 * A write whose outcome is not known: helm applied it but it could not be recorded (the store
 * failed, or the lock on the agent was lost), or helm failed talking to the cluster part-way. The
 * key stays claimed, linked to the operation, for a retry to settle from what helm holds (or the
 * reconciler to complete) rather than run the write blindly a second time.
 */
export class UncertainWrite extends AppError {
  static of(error: AppError): UncertainWrite {
    return new UncertainWrite(error.code, error.message, error.details, error.retryAfterSeconds);
  }
}

/**
 * What makes writes safe with several replicas, retries and restarts: a gate that closes on
 * shutdown and waits for running writes, one lease per agent held in the store, and the first
 * answer kept per idempotency key.
 */
@Injectable()
export class AgentWrites {
  private readonly logger = new Logger(AgentWrites.name);
  private running = 0;
  private closing = false;
  private idleWaiters: (() => void)[] = [];
  /** Per agent key: the promise that resolves when the last write in this replica's line has left. */
  private readonly lines = new Map<string, Promise<void>>();

  constructor(
    private readonly config: AppConfig,
    private readonly leases: AgentLeaseRepository,
    private readonly keys: IdempotencyRepository,
    private readonly store: Store,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  get replica(): string {
    return this.config.REPLICA_ID;
  }

  /** Stops taking writes; resolves when the running ones finished or the timeout passed. */
  async drain(timeoutMs: number): Promise<boolean> {
    this.closing = true;
    if (this.running === 0) return true;
    const idle = new Promise<true>((resolve) => this.idleWaiters.push(() => resolve(true)));
    return Promise.race([idle, sleep(timeoutMs).then(() => false)]);
  }

  /**
   * Runs a write holding the agent's lease, renewed while it runs. Writes to one agent wait in
   * line for it — in arrival order in this replica, and for other replicas' writes through the
   * store lease — for up to WRITE_QUEUE_SECONDS, then are refused with conflict naming the
   * operation in progress; nothing is rendered or spawned while waiting. Under the lease and
   * before the work, `settle` resolves operations an earlier writer left pending (a dead
   * replica whose lease expired, or a write whose recording failed).
   */
  async exclusive<T>(
    namespace: string,
    name: string,
    settle: () => Promise<unknown>,
    work: (operationId: string, lease: HeldLease) => Promise<T>,
  ): Promise<T> {
    if (this.closing) throw new AppError('unavailable', 'agent-manager is shutting down and takes no new writes: retry, another replica will answer');
    this.running++;
    const key = `${namespace}/${name}`;
    const leave = this.joinLine(key); // at once, before anything is awaited: the line keeps arrival order
    try {
      await this.requireWritableStore();
      const operationId = randomUUID();
      const ttl = this.config.LEASE_TTL_SECONDS * 1000;
      const deadline = Date.now() + this.config.WRITE_QUEUE_SECONDS * 1000;
      const waiting = process.hrtime.bigint();
      const turn = await leave.turn(deadline);
      const lease = turn ? await this.acquire(key, operationId, ttl, deadline) : await this.leases.acquire(key, this.replica, operationId, ttl);
      this.metrics?.leaseWait(lease.acquired ? 'acquired' : 'refused', Number(process.hrtime.bigint() - waiting) / 1e9);
      if (!lease.acquired) throw busy(namespace, name, lease.holder, this.config.WRITE_QUEUE_SECONDS);
      const held: HeldLease = { lost: false };
      const stopRenewing = this.leases.keepAlive(key, this.replica, operationId, ttl, (message, lost) => {
        held.lost ||= lost;
        this.logger.warn(message);
      });
      try {
        if (lease.takenOverFrom) {
          this.logger.warn(`took over the expired lease on ${key} from ${lease.takenOverFrom.owner} (operation ${lease.takenOverFrom.operationId})`);
        }
        await settle();
        return await work(operationId, held);
      } finally {
        stopRenewing();
        await this.leases.release(key, this.replica, operationId).catch((error: unknown) => this.logger.warn(`releasing the lease on ${key} failed: ${(error as Error).message}`));
      }
    } finally {
      leave();
      this.running--;
      if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  /** Refuses a write the store could not keep (its file removed or replaced, or not writable): never a 201 into a lost file. */
  private async requireWritableStore(): Promise<void> {
    const health = await this.store.check();
    if (health.ok) return;
    this.logger.error(`refusing a write: ${health.reason}`);
    throw new AppError('unavailable', `agent-manager cannot record writes now: ${health.reason}`, [], STORE_RETRY_SECONDS);
  }

  /**
   * A place in this replica's line for the agent: `turn(deadline)` resolves true when every
   * write that joined before has left, false when the deadline came first; calling the
   * returned function leaves the line (whether or not the turn came).
   */
  private joinLine(key: string): (() => void) & { turn(deadline: number): Promise<boolean> } {
    const before = this.lines.get(key) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const tail = before.then(() => mine);
    this.lines.set(key, tail);
    const leave = () => {
      done();
      if (this.lines.get(key) === tail) this.lines.delete(key);
    };
    return Object.assign(leave, {
      turn: async (deadline: number) => {
        const wait = deadline - Date.now();
        if (wait <= 0) return Promise.race([before.then(() => true), Promise.resolve(false)]);
        const timer = new AbortController();
        const timedOut = sleep(wait, false, { signal: timer.signal }).catch(() => false);
        try {
          return await Promise.race([before.then(() => true), timedOut]);
        } finally {
          timer.abort();
        }
      },
    });
  }

  /**
   * Takes the agent's lease, waiting while another replica's write or a recovery sweep holds it:
   * a write until the deadline, a recovery sweep's brief hold for up to one TTL past it.
   */
  private async acquire(key: string, operationId: string, ttl: number, deadline: number): Promise<LeaseResult> {
    const recoveryDeadline = Math.max(deadline, Date.now() + ttl);
    for (;;) {
      const lease = await this.leases.acquire(key, this.replica, operationId, ttl);
      if (lease.acquired) return lease;
      const until = isRecoveryHolder(lease.holder) ? recoveryDeadline : deadline;
      if (Date.now() >= until) return lease;
      // Wait by reading, not by inserting: a refused insert is an error in PostgreSQL's log. At
      // least one poll before the next try: the expiry is on the store's clock, and this
      // replica's may run ahead of it (the holder looks expired here while the store refuses).
      let holder: LeaseHolder | null;
      do {
        await sleep(LINE_POLL_MS);
        holder = await this.leases.holder(key);
      } while (holder && holder.expiresAt.getTime() > this.store.clock.nowMs() && Date.now() < until);
    }
  }

  /**
   * Answers a write once per key: the first request runs; a retry with the same request gets
   * the first answer (or waits for it while it runs, then 409 in progress); the same key with
   * another request is refused. The run links the key to the operation it journals and stores
   * its answer in the transaction that records the outcome (`claimed.answered` then). A retry
   * that finds the key's run stopped without an answer (its replica died, or the store failed
   * while recording) settles that operation from what helm holds and answers from what landed,
   * or runs the write when nothing did. Refusals the environment caused are never kept.
   */
  async idempotent<T>(sent: string | undefined, request: unknown, run: (claimed?: ClaimedKey) => Promise<T>, hooks: KeyHooks<T>): Promise<T> {
    if (!sent) return run();
    const key = scopedKey(sent);
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
          await this.keys.complete(key, { status: 200, body: { result: answer } }, keep, undefined, op.id);
          continue;
        }
        if (op?.state !== 'pending' && (await this.keys.takeOver(key, op?.id ?? null, pending))) break;
      }
      if (Date.now() > deadline || settled > 3) throw new AppError('conflict', `a request with idempotency key "${sent}" is still in progress: retry later with the same key`);
      await sleep(150);
    }
    const claimed: ClaimedKey = { key, keepMs: keep, answered: false };
    const renew = setInterval(() => {
      this.keys.renew(key, pending).catch((error: unknown) => this.logger.warn(`renewing idempotency key ${key} failed: ${(error as Error).message}`));
    }, Math.max(250, Math.floor(pending / 3)));
    try {
      const answer = await run(claimed);
      if (!claimed.answered) await this.keep(key, () => this.keys.complete(key, { status: 200, body: { result: answer } }, keep));
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

  /** Removes answers past their time; the recovery sweep calls it. */
  purgeExpiredKeys(): Promise<number> {
    return this.keys.purgeExpired(this.keepMs);
  }
}

/**
 * A key as stored: scoped to who sent it (the verified subject; the actor named when auth is off), so
 * the same key from two callers never collides and never replays someone else's answer.
 */
export function scopedKey(key: string): string {
  const context = OperationContexts.current();
  const verified = context.principal && context.principal.method !== 'anonymous' ? context.principal.subject : undefined;
  const caller = createHash('sha256').update(verified ?? context.actor).digest('hex');
  return `${caller}:${key}`;
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

function busy(namespace: string, name: string, holder: LeaseHolder, waited: number): AppError {
  return new AppError(
    'conflict',
    `agent ${namespace}/${name} has a write in progress (operation ${holder.operationId} on replica ${holder.owner}) that did not finish within ${waited}s (WRITE_QUEUE_SECONDS); retry after it finishes`,
    [{ path: 'name', message: `operation ${holder.operationId} holds this agent until ${holder.expiresAt.toISOString()} unless renewed` }],
  );
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
