import { Injectable } from '@nestjs/common';
import { Prisma, Store } from '@app/store';
import { isUniqueViolation } from './lease.repository.js';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

/** What became of the operation a pending key's request journaled, as the journal holds it now. */
export interface KeyOperation {
  id: string;
  state: string;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; answer: StoredAnswer }
  /**
   * Another run of the request holds the key. `expired`: it stopped renewing (its replica died, or
   * it failed before it could answer); `operation`: what it journaled before helm ran, if it got that far.
   */
  | { kind: 'pending'; expired: boolean; operation: KeyOperation | null }
  | { kind: 'mismatch' };

/**
 * First answers to writes sent with an idempotency key, kept until they expire (on the store's
 * clock, as leases are). A claim is linked to the operation its write journals, so a retry after
 * a crash or a store failure finds out from the journal what became of the first run instead of
 * running the write a second time.
 */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  /** `ms` from now on the store's clock, as every expiry here is: replicas whose clocks differ agree on which claims lapsed. */
  private async storeTime(ms: number): Promise<Date> {
    return new Date((await this.store.now()).getTime() + ms);
  }

  /**
   * Claims the key for this request, or says what holds it. A claim is pending for `pendingMs`
   * unless renewed. A lapsed claim that journaled no operation is taken over at once (nothing
   * of it can have landed); one that did is left to the caller, who settles that operation first.
   */
  async claim(key: string, requestHash: string, pendingMs: number): Promise<Claim> {
    const now = await this.store.now();
    await this.db.idempotencyRecord.deleteMany({ where: { key, expiresAt: { lt: now }, OR: [{ state: 'done' }, { operationId: null }] } });
    try {
      await this.db.idempotencyRecord.create({ data: { key, requestHash, state: 'pending', expiresAt: new Date(now.getTime() + pendingMs) } });
      return { kind: 'claimed' };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    const record = await this.db.idempotencyRecord.findUnique({ where: { key } });
    if (!record) return this.claim(key, requestHash, pendingMs);
    if (record.requestHash !== requestHash) return { kind: 'mismatch' };
    if (record.state === 'done' && record.status !== null) return { kind: 'replay', answer: { status: record.status, body: record.response } };
    const operation = record.operationId ? await this.db.operation.findUnique({ where: { id: record.operationId }, select: { id: true, state: true } }) : null;
    return { kind: 'pending', expired: record.expiresAt.getTime() < now.getTime(), operation };
  }

  /**
   * Takes over a lapsed claim whose operation did not land (closed failed, or never journaled):
   * the retry runs the write. False when someone else took it first.
   */
  async takeOver(key: string, operationId: string | null, pendingMs: number): Promise<boolean> {
    const now = await this.store.now();
    const taken = await this.db.idempotencyRecord.updateMany({
      where: { key, state: 'pending', operationId, expiresAt: { lt: now } },
      data: { operationId: null, expiresAt: new Date(now.getTime() + pendingMs) },
    });
    return taken.count === 1;
  }

  /** Keeps a pending claim alive while its write runs. */
  async renew(key: string, pendingMs: number): Promise<void> {
    await this.db.idempotencyRecord.updateMany({ where: { key, state: 'pending' }, data: { expiresAt: await this.storeTime(pendingMs) } });
  }

  /** Lets a claim lapse now (its write stopped without an answer), so a retry settles its operation at once. */
  async lapse(key: string): Promise<void> {
    await this.db.idempotencyRecord.updateMany({ where: { key, state: 'pending' }, data: { expiresAt: await this.storeTime(-1) } });
  }

  /**
   * Stores the first answer, kept for `ttlMs`, once the write's outcome is recorded (or for an answer
   * that recorded nothing). Only a pending claim is answered; with `operationId`, only the claim
   * linked to that operation (a retry answering a lapsed claim from what it recorded).
   */
  async complete(key: string, answer: StoredAnswer, ttlMs: number, operationId?: string): Promise<boolean> {
    const done = await this.db.idempotencyRecord.updateMany({
      where: { key, state: 'pending', ...(operationId ? { operationId } : {}) },
      data: { state: 'done', status: answer.status, response: answer.body as Prisma.InputJsonValue, expiresAt: await this.storeTime(ttlMs) },
    });
    return done.count === 1;
  }

  /**
   * Forgets a claim whose write may be retried (it was refused for a passing reason or failed in
   * the backend). Only a claim: an answer already kept (the write was recorded) stays to be replayed.
   */
  async forget(key: string): Promise<void> {
    await this.db.idempotencyRecord.deleteMany({ where: { key, state: 'pending' } });
  }

  /**
   * Removes answers past their time, and lapsed claims that journaled nothing. A lapsed claim
   * whose operation a retry may still settle is kept for `keepMs` more.
   */
  async purgeExpired(keepMs: number): Promise<number> {
    const now = (await this.store.now()).getTime();
    const purged = await this.db.idempotencyRecord.deleteMany({
      where: {
        OR: [
          { expiresAt: { lt: new Date(now) }, OR: [{ state: 'done' }, { operationId: null }] },
          { expiresAt: { lt: new Date(now - keepMs) } },
        ],
      },
    });
    return purged.count;
  }
}
