import { Injectable } from '@nestjs/common';
import { Prisma, Store } from '@app/store';
import { isUniqueViolation } from './agent-lease.repository.js';

export interface StoredAnswer {
  status: number;
  body: unknown;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'pending' }
  | { kind: 'mismatch' };

/** First answers to writes sent with an idempotency key, kept until they expire. */
@Injectable()
export class IdempotencyRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  /**
   * Claims the key for this request, or says what holds it. A claim is pending for `pendingMs`
   * unless renewed, so the claim of a replica that died mid-write lapses and a retry runs.
   */
  async claim(key: string, requestHash: string, pendingMs: number): Promise<Claim> {
    const now = new Date();
    await this.db.idempotencyRecord.deleteMany({ where: { key, expiresAt: { lt: now } } });
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
    return { kind: 'pending' };
  }

  /** Keeps a pending claim alive while its write runs. */
  async renew(key: string, pendingMs: number): Promise<void> {
    await this.db.idempotencyRecord.updateMany({ where: { key, state: 'pending' }, data: { expiresAt: new Date(Date.now() + pendingMs) } });
  }

  /** Stores the first answer, kept for `ttlMs`. */
  async complete(key: string, answer: StoredAnswer, ttlMs: number): Promise<void> {
    await this.db.idempotencyRecord.update({
      where: { key },
      data: { state: 'done', status: answer.status, response: answer.body as Prisma.InputJsonValue, expiresAt: new Date(Date.now() + ttlMs) },
    });
  }

  /** Forgets a claim whose write may be retried (it was refused for a passing reason or failed in the backend). */
  async forget(key: string): Promise<void> {
    await this.db.idempotencyRecord.deleteMany({ where: { key } });
  }

  async purgeExpired(): Promise<number> {
    return (await this.db.idempotencyRecord.deleteMany({ where: { expiresAt: { lt: new Date() } } })).count;
  }
}
