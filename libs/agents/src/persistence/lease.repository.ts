import { Injectable } from '@nestjs/common';
import { Store } from '@app/store';

export interface LeaseHolder {
  owner: string;
  operationId: string;
  expiresAt: Date;
}

/**
 * The owner a replica's recovery sweep takes leases under. Its hold is brief (one helm status
 * and a record), so a write that meets it waits instead of being refused.
 */
export function recoveryOwner(replica: string): string {
  return `${RECOVERY_PREFIX}${replica}`;
}

export function isRecoveryHolder(holder: LeaseHolder): boolean {
  return holder.owner.startsWith(RECOVERY_PREFIX);
}

/** Reserved: REPLICA_ID may not start with it (see AppConfig). */
export const RECOVERY_PREFIX = 'recovery@';

export type LeaseResult =
  | { acquired: true; takenOverFrom?: LeaseHolder }
  | { acquired: false; holder: LeaseHolder };

/**
 * One writer per agent across replicas, held in the store: a row per agent key with an
 * owner and an expiry. Taking a lease is an insert; taking over an expired one is a
 * conditional update that only one contender can win. Works the same on SQLite and PostgreSQL;
 * expiry is read on the store's clock, so replicas with skewed clocks agree.
 */
@Injectable()
export class AgentLeaseRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  async acquire(key: string, owner: string, operationId: string, ttlMs: number): Promise<LeaseResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      const now = await this.store.now();
      try {
        await this.db.agentLease.create({ data: { key, owner, operationId, expiresAt: new Date(now.getTime() + ttlMs), acquiredAt: now } });
        return { acquired: true };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const holder = await this.db.agentLease.findUnique({ where: { key } });
      if (!holder) continue; // released between our insert and read: try again
      if (holder.expiresAt.getTime() > now.getTime()) {
        return { acquired: false, holder: { owner: holder.owner, operationId: holder.operationId, expiresAt: holder.expiresAt } };
      }
      const taken = await this.db.agentLease.updateMany({
        where: { key, operationId: holder.operationId, expiresAt: { lt: now } },
        data: { owner, operationId, expiresAt: new Date(now.getTime() + ttlMs), acquiredAt: now },
      });
      if (taken.count === 1) return { acquired: true, takenOverFrom: { owner: holder.owner, operationId: holder.operationId, expiresAt: holder.expiresAt } };
    }
    const holder = await this.db.agentLease.findUnique({ where: { key } });
    if (holder) return { acquired: false, holder: { owner: holder.owner, operationId: holder.operationId, expiresAt: holder.expiresAt } };
    throw new Error(`lease ${key}: contended without a holder`);
  }

  /** Who holds the lease now, read without contending for it. */
  async holder(key: string): Promise<LeaseHolder | null> {
    const row = await this.db.agentLease.findUnique({ where: { key } });
    return row && { owner: row.owner, operationId: row.operationId, expiresAt: row.expiresAt };
  }

  /**
   * Renews a held lease every third of its TTL until the returned function is called;
   * `problem` hears of a lease lost to another holder (lost: true) or a renewal that failed.
   */
  keepAlive(key: string, owner: string, operationId: string, ttlMs: number, problem: (message: string, lost: boolean) => void): () => void {
    const timer = setInterval(() => {
      this.renew(key, owner, operationId, ttlMs).then(
        (kept) => kept || problem(`lost the lease on ${key} while operation ${operationId} ran`, true),
        (error: unknown) => problem(`renewing the lease on ${key} failed: ${(error as Error).message}`, false),
      );
    }, Math.max(250, Math.floor(ttlMs / 3)));
    return () => clearInterval(timer);
  }

  /** Extends a held lease; false when it was lost (expired and taken over). */
  async renew(key: string, owner: string, operationId: string, ttlMs: number): Promise<boolean> {
    const now = await this.store.now();
    const renewed = await this.db.agentLease.updateMany({ where: { key, owner, operationId }, data: { expiresAt: new Date(now.getTime() + ttlMs) } });
    return renewed.count === 1;
  }

  async release(key: string, owner: string, operationId: string): Promise<void> {
    await this.db.agentLease.deleteMany({ where: { key, owner, operationId } });
  }
}

export function isUniqueViolation(error: unknown): boolean {
  return (error as { code?: string })?.code === 'P2002';
}
