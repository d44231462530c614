import { Injectable } from '@nestjs/common';
import { Prisma, Store } from '@app/store';
import { isUniqueViolation } from '../persistence/lease.repository.js';
import { EVENTS_GENERATION } from './outbox.js';

/** A change event as the outbox holds it. */
export interface StoredEvent {
  id: string;
  seq: number;
  type: string;
  source: string;
  subject: string;
  namespace: string | null;
  time: Date;
  data: Record<string, unknown>;
}

/** One event waiting for one subscription. */
export interface PendingDelivery {
  seq: number;
  eventId: string;
  subject: string;
  attempts: number;
  nextAttemptAt: Date;
}

export type DeliveryState = 'pending' | 'delivered' | 'dead';

/** The outbox, the subscriptions the dispatcher follows and their deliveries; the only event code that touches Prisma. */
@Injectable()
export class EventsRepository {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.client;
  }

  now(): Promise<Date> {
    return this.store.now();
  }

  /** Oldest first, after `afterSeq`; `type` may hold `*` (any text). */
  async page(filter: { afterSeq?: number; type?: string; subject?: string; limit: number }): Promise<StoredEvent[]> {
    const rows = await this.db.changeEvent.findMany({
      where: {
        ...(filter.afterSeq !== undefined && { seq: { gt: filter.afterSeq } }),
        ...(filter.subject !== undefined && { subject: filter.subject }),
        ...(filter.type !== undefined && typeWhere(filter.type)),
      },
      orderBy: { seq: 'asc' },
      take: filter.limit,
    });
    return rows.map(toStoredEvent);
  }

  async events(seqs: number[]): Promise<Map<number, StoredEvent>> {
    const rows = await this.db.changeEvent.findMany({ where: { seq: { in: seqs } } });
    return new Map(rows.map((row) => [row.seq, toStoredEvent(row)]));
  }

  /** The last seq given out (0 before the first event). */
  async lastSeq(): Promise<number> {
    const row = await this.db.storeGeneration.findUnique({ where: { key: EVENTS_GENERATION } });
    return row?.value ?? 0;
  }

  /**
   * Follows a subscription from now on, unless it is followed already (by this replica before a
   * restart, or another): the events after the last one written are its own. Answers where its
   * matching stands.
   */
  async follow(name: string): Promise<{ scannedSeq: number }> {
    const known = await this.db.webhookSubscription.findUnique({ where: { name } });
    if (known) return known;
    const from = await this.lastSeq();
    try {
      await this.db.webhookSubscription.create({ data: { name, fromSeq: from, scannedSeq: from } });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    return (await this.db.webhookSubscription.findUniqueOrThrow({ where: { name } }));
  }

  /**
   * Matches the events after the subscription's `scannedSeq` (a batch) and makes a pending
   * delivery of each one `matches` accepts, moving `scannedSeq` on in the same transaction (only
   * from where it was read: a second dispatcher that raced it writes nothing). Answers how many
   * events it read.
   */
  async fanOut(name: string, matches: (event: StoredEvent) => boolean, batch = 200): Promise<number> {
    const subscription = await this.db.webhookSubscription.findUnique({ where: { name } });
    if (!subscription) return 0;
    const events = await this.page({ afterSeq: subscription.scannedSeq, limit: batch });
    if (events.length === 0) return 0;
    const now = await this.store.now();
    const deliveries = events.filter(matches).map((event) => ({ subscription: name, seq: event.seq, eventId: event.id, subject: event.subject, state: 'pending', nextAttemptAt: now }));
    await this.db.$transaction(async (tx) => {
      const moved = await tx.webhookSubscription.updateMany({ where: { name, scannedSeq: subscription.scannedSeq }, data: { scannedSeq: events[events.length - 1].seq } });
      if (moved.count !== 1) return;
      if (deliveries.length > 0) await tx.eventDelivery.createMany({ data: deliveries });
    });
    return events.length;
  }

  /** The subscription's pending deliveries, oldest first. */
  async pending(name: string, limit = 500): Promise<PendingDelivery[]> {
    return this.db.eventDelivery.findMany({
      where: { subscription: name, state: 'pending' },
      orderBy: { seq: 'asc' },
      take: limit,
      select: { seq: true, eventId: true, subject: true, attempts: true, nextAttemptAt: true },
    });
  }

  async delivered(name: string, seq: number): Promise<void> {
    await this.db.eventDelivery.updateMany({ where: { subscription: name, seq, state: 'pending' }, data: { state: 'delivered', attempts: { increment: 1 }, deliveredAt: await this.store.now(), lastError: null } });
  }

  /** A failed attempt: tried again at `retryAt`, or `dead` when there is none. */
  async failed(name: string, seq: number, error: string, retryAt: Date | null): Promise<void> {
    await this.db.eventDelivery.updateMany({
      where: { subscription: name, seq, state: 'pending' },
      data: { attempts: { increment: 1 }, lastError: error.slice(0, 1000), ...(retryAt ? { nextAttemptAt: retryAt } : { state: 'dead' }) },
    });
  }

  /** Deliveries by subscription and state (for the webhook_deliveries gauge and tests). */
  async countDeliveries(): Promise<{ subscription: string; state: string; count: number }[]> {
    const groups = await this.db.eventDelivery.groupBy({ by: ['subscription', 'state'], _count: { _all: true } });
    return groups.map((group) => ({ subscription: group.subscription, state: group.state, count: group._count._all }));
  }
}

/** A type filter in SQL: equality, or a LIKE where `*` stands for any text (`_` and `%` escaped). */
function typeWhere(type: string): Prisma.ChangeEventWhereInput {
  if (!type.includes('*')) return { type };
  const parts = type.split('*');
  // Prisma's startsWith/endsWith/contains escape LIKE's own wildcards; a pattern is matched piecewise.
  const and: Prisma.ChangeEventWhereInput[] = [];
  if (parts[0]) and.push({ type: { startsWith: parts[0] } });
  if (parts[parts.length - 1]) and.push({ type: { endsWith: parts[parts.length - 1] } });
  for (const middle of parts.slice(1, -1)) if (middle) and.push({ type: { contains: middle } });
  return { AND: and };
}

function toStoredEvent(row: { id: string; seq: number; type: string; source: string; subject: string; namespace: string | null; time: Date; data: unknown }): StoredEvent {
  return { ...row, data: row.data as Record<string, unknown> };
}
