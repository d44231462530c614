import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { AppConfig, AppError } from '@app/common';
import { Store } from '@app/store';
import { Metrics } from '@app/telemetry';
import { AgentLeaseRepository, isRecoveryHolder, recoveryOwner, type LeaseHolder, type LeaseResult } from '../persistence/lease.repository.js';

/** A lease held for one piece of work; `lost` is set when a renewal found it taken over (another replica may hold the agent now). */
export interface HeldLease {
  operationId: string;
  lost: boolean;
}

/**
 * Who takes an agent and how long it waits:
 * - `write`: a caller's write. It waits in this replica's line (arrival order), then for the store
 *   lease until WRITE_QUEUE_SECONDS, a recovery sweep's brief hold for up to one TTL past that.
 * - `service`: the service's own work on one agent (a reconcile action). A write's hold refuses it at
 *   once (the write settles the agent itself); another replica's sweep is waited out for up to one TTL.
 * - `sweep`: the recovery sweep. One try; any holder refuses it (the holder settles what is pending).
 */
export type LockMode = 'write' | 'service' | 'sweep';

/** How often a waiting contender reads who holds the agent's lease. */
const POLL_MS = 100;

/** What a refused write tells the caller to wait before retrying when the store is down. */
const STORE_RETRY_SECONDS = 5;

/** The agent is held by someone else past what this contender waits: `holder` says who. */
export class AgentBusy extends AppError {
  constructor(
    message: string,
    readonly holder: LeaseHolder,
    details: { path: string; message: string }[] = [],
  ) {
    super('conflict', message, details);
  }
}

/**
 * One holder per agent across replicas: the store lease (agent-lease.repository.ts), taken,
 * waited for, renewed while the work runs and released, the same way for every kind of work. This
 * is the only place that takes an agent's lease.
 */
@Injectable()
export class AgentLock {
  private readonly logger = new Logger(AgentLock.name);
  /** Per agent key: the promise that resolves when the last write in this replica's line has left. */
  private readonly lines = new Map<string, Promise<void>>();

  constructor(
    private readonly config: AppConfig,
    private readonly leases: AgentLeaseRepository,
    private readonly store: Store,
    @Optional() private readonly metrics?: Metrics,
  ) {}

  /** Runs `work` holding the agent's lease (as `mode` says), renewed while it runs; throws AgentBusy when it cannot be had. */
  async hold<T>(ref: { namespace: string; name: string }, mode: LockMode, work: (lease: HeldLease) => Promise<T>, operationId: string = randomUUID()): Promise<T> {
    const key = `${ref.namespace}/${ref.name}`;
    const leave = mode === 'write' ? this.joinLine(key) : undefined; // at once, before anything is awaited: the line keeps arrival order
    try {
      if (mode === 'write') await this.requireWritableStore();
      const owner = mode === 'write' ? this.config.REPLICA_ID : recoveryOwner(this.config.REPLICA_ID);
      const ttl = this.config.LEASE_TTL_SECONDS * 1000;
      const lease = await this.take(key, owner, operationId, mode, leave);
      if (!lease.acquired) throw this.busy(ref, mode, lease.holder);
      if (lease.takenOverFrom) this.logger.warn(`took over the expired lease on ${key} from ${lease.takenOverFrom.owner} (operation ${lease.takenOverFrom.operationId})`);
      const held: HeldLease = { operationId, lost: false };
      const stopRenewing = this.leases.keepAlive(key, owner, operationId, ttl, (message, lost) => {
        held.lost ||= lost;
        this.logger.warn(message);
      });
      try {
        return await work(held);
      } finally {
        stopRenewing();
        await this.leases.release(key, owner, operationId).catch((error: unknown) => this.logger.warn(`releasing the lease on ${key} failed: ${(error as Error).message}`));
      }
    } finally {
      leave?.();
    }
  }

  /** The lease, waited for as `mode` allows: by reading who holds it, never by inserting again and again (each refused insert is an error in PostgreSQL's log). */
  private async take(key: string, owner: string, operationId: string, mode: LockMode, line?: Line): Promise<LeaseResult> {
    const ttl = this.config.LEASE_TTL_SECONDS * 1000;
    const until = mode === 'write' ? Date.now() + this.config.WRITE_QUEUE_SECONDS * 1000 : Date.now();
    const waiting = process.hrtime.bigint();
    const report = (lease: LeaseResult) => {
      if (mode === 'write') this.metrics?.leaseWait(lease.acquired ? 'acquired' : 'refused', Number(process.hrtime.bigint() - waiting) / 1e9);
      return lease;
    };
    // A write whose turn in this replica's line did not come in time tries the lease once.
    if (line && !(await line.turn(until))) return report(await this.leases.acquire(key, owner, operationId, ttl));
    const untilRecovery = mode === 'sweep' ? until : Math.max(until, Date.now() + ttl);
    const limit = (holder: LeaseHolder) => (isRecoveryHolder(holder) ? untilRecovery : until);
    for (;;) {
      const lease = await this.leases.acquire(key, owner, operationId, ttl);
      if (lease.acquired || Date.now() >= limit(lease.holder)) return report(lease);
      // At least one poll before the next try: the expiry is on the store's clock, and this
      // replica's may run ahead of it (the holder looks expired here while the store refuses).
      let holder: LeaseHolder | null;
      do {
        await sleep(POLL_MS);
        holder = await this.leases.holder(key);
      } while (holder && holder.expiresAt.getTime() > this.store.clock.nowMs() && Date.now() < limit(holder));
    }
  }

  private busy(ref: { namespace: string; name: string }, mode: LockMode, holder: LeaseHolder): AgentBusy {
    const { namespace, name } = ref;
    const held = `operation ${holder.operationId} on replica ${holder.owner}`;
    if (mode !== 'write') return new AgentBusy(`agent ${namespace}/${name} is held by ${held}`, holder);
    return new AgentBusy(
      `agent ${namespace}/${name} has a write in progress (${held}) that did not finish within ${this.config.WRITE_QUEUE_SECONDS}s (WRITE_QUEUE_SECONDS); retry after it finishes`,
      holder,
      [{ path: 'name', message: `operation ${holder.operationId} holds this agent until ${holder.expiresAt.toISOString()} unless renewed` }],
    );
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
  private joinLine(key: string): Line {
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
}

type Line = (() => void) & { turn(deadline: number): Promise<boolean> };
