import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { AgentLeaseRepository } from '../persistence/lease.repository.js';

/** The store lease that makes one replica the reconciler; agent leases are keyed `namespace/name`, so it never meets one. */
export const RECONCILER_LEASE = 'reconciler';

/**
 * One reconciler per cluster: replicas contend for one store lease (taken, renewed and taken over
 * after expiry as an agent's lease is); the holder acts, the others keep their watches for status
 * reads and try again every third of the TTL. A replica that stops gives the lease up, so the next
 * one takes over within a third of the TTL instead of after it.
 */
export class ReconcilerElection {
  private readonly logger: Logger;
  private readonly term = randomUUID();
  private timer?: NodeJS.Timeout;
  private stopRenewing?: () => void;
  private trying?: Promise<void>;
  private stopped = false;
  leading = false;

  constructor(
    private readonly leases: AgentLeaseRepository,
    private readonly owner: string,
    private readonly ttlMs: number,
    /** Hears of every change of this replica's role. */
    private readonly changed: (leading: boolean) => void,
    /** Another role elected the same way (the webhook dispatcher): its lease key and its name in the log. */
    private readonly role: { key: string; name: string; logger: string } = { key: RECONCILER_LEASE, name: 'reconciler', logger: 'Reconciler' },
  ) {
    this.logger = new Logger(role.logger);
  }

  start(): void {
    void this.tryToLead();
    this.timer = setInterval(() => void this.tryToLead(), Math.max(250, Math.floor(this.ttlMs / 3)));
    this.timer.unref();
  }

  /** Stops contending and gives the lease up when held. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.trying;
    this.stopRenewing?.();
    if (this.leading) {
      this.leading = false;
      await this.leases.release(this.role.key, this.owner, this.term).catch(() => undefined);
    }
  }

  private tryToLead(): Promise<void> {
    if (this.leading || this.stopped) return Promise.resolve();
    this.trying ??= this.leases
      .acquire(this.role.key, this.owner, this.term, this.ttlMs)
      .then((result) => {
        if (!result.acquired || this.stopped) return;
        this.leading = true;
        this.logger.log(`this replica is the ${this.role.name} (${this.owner})${result.takenOverFrom ? `, taken over from ${result.takenOverFrom.owner}, whose lease expired` : ''}`);
        this.stopRenewing = this.leases.keepAlive(this.role.key, this.owner, this.term, this.ttlMs, (message, lost) => {
          if (!lost) return this.logger.warn(`${message}; the ${this.role.name} goes on while its lease lasts`);
          this.stopRenewing?.();
          this.leading = false;
          this.logger.warn(`this replica is no longer the ${this.role.name}: ${message}`);
          this.changed(false);
        });
        this.changed(true);
      })
      .catch((error: unknown) => this.logger.debug(`contending for the ${this.role.name} lease failed, tried again shortly: ${(error as Error).message}`))
      .finally(() => (this.trying = undefined));
    return this.trying;
  }
}
