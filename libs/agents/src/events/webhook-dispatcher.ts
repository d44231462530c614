import { createHmac } from 'node:crypto';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { CloudEvent, HTTP } from 'cloudevents';
import { AppConfig } from '@app/common';
import { Metrics } from '@app/telemetry';
import { AgentLeaseRepository } from '../persistence/lease.repository.js';
import { ReconcilerElection } from '../reconcile/reconciler-election.js';
import { EventsRepository, type PendingDelivery, type StoredEvent } from './events.repository.js';
import { loadWebhooksFile, subscriptionMatcher, type WebhookSubscription } from './webhooks-file.js';

/** The store lease that makes one replica the webhook dispatcher. */
export const WEBHOOKS_LEASE = 'webhooks';

/** The header a receiver checks a delivery with (docs/contract.md §14). */
export const SIGNATURE_HEADER = 'X-Agent-Manager-Signature';

/** Deliveries to different subjects of one subscription sent at once. */
const PARALLEL_SUBJECTS = 8;

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the time is signed with the body, so a
 * receiver that refuses old times refuses a replayed delivery.
 */
export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

/** An outbox row as the CloudEvents SDK's event: `sequence` (commit order) and `namespace` as extensions. */
export function toCloudEvent(event: StoredEvent): CloudEvent<Record<string, unknown>> {
  return new CloudEvent<Record<string, unknown>>({
    specversion: '1.0',
    id: event.id,
    type: event.type,
    source: event.source,
    subject: event.subject,
    time: event.time.toISOString(),
    datacontenttype: 'application/json',
    sequence: String(event.seq),
    ...(event.namespace !== null && { namespace: event.namespace }),
    data: event.data,
  });
}

/**
 * Delivers the outbox to the webhooks of WEBHOOKS_FILE (docs/contract.md §14): at least once, in
 * order per subject per subscription (an event waits while an earlier one of its subject is being
 * retried), with exponential backoff and `dead` after WEBHOOK_MAX_ATTEMPTS. Its state is the
 * store's, so a restart resumes where it was; one replica at a time delivers, the holder of the
 * `webhooks` store lease (elected as the reconciler is).
 */
@Injectable()
export class WebhookDispatcher implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Webhooks');
  private subscriptions: WebhookSubscription[] = [];
  private election?: ReconcilerElection;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly config: AppConfig,
    private readonly events: EventsRepository,
    private readonly leases: AgentLeaseRepository,
    private readonly metrics: Metrics,
  ) {}

  /** Reads WEBHOOKS_FILE (a bad entry stops the start) and follows each subscription from the last event written, unless it was followed already. */
  async onModuleInit(): Promise<void> {
    if (!this.config.WEBHOOKS_FILE) return;
    this.subscriptions = loadWebhooksFile(this.config.WEBHOOKS_FILE);
    for (const subscription of this.subscriptions) await this.events.follow(subscription.name);
    this.logger.log(`${this.subscriptions.length} webhook subscription(s) from ${this.config.WEBHOOKS_FILE}: ${this.subscriptions.map((s) => s.name).join(', ')}`);
  }

  onApplicationBootstrap(): void {
    if (this.subscriptions.length === 0) return;
    const ttlMs = this.config.LEASE_TTL_SECONDS * 1000;
    this.election = new ReconcilerElection(this.leases, `webhooks@${this.config.REPLICA_ID}`, ttlMs, (leading) => leading && this.kick(), {
      key: WEBHOOKS_LEASE,
      name: 'webhook dispatcher',
      logger: 'Webhooks',
    });
    this.election.start();
    this.timer = setInterval(() => this.kick(), this.config.WEBHOOK_POLL_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    await this.election?.stop();
  }

  /** Whether this replica delivers now. */
  get leading(): boolean {
    return this.election?.leading ?? false;
  }

  /** Starts a pass unless one runs (or this replica does not deliver). */
  kick(): void {
    if (this.stopped || !this.leading || this.running) return;
    this.running = this.pass()
      .catch((error: unknown) => this.logger.warn(`delivering change events failed, tried again in ${this.config.WEBHOOK_POLL_MS} ms: ${(error as Error).message}`))
      .finally(() => (this.running = undefined));
  }

  /** Rounds over every subscription while any of them moved on. */
  private async pass(): Promise<void> {
    for (let moved = true; moved && this.leading && !this.stopped; ) {
      moved = false;
      for (const subscription of this.subscriptions) if (await this.round(subscription)) moved = true;
    }
  }

  /**
   * Matches the subscription's new events, then sends the first pending event of each subject that
   * is due: true when something moved (events matched, a delivery made), so another round follows.
   */
  private async round(subscription: WebhookSubscription): Promise<boolean> {
    const matched = await this.events.fanOut(subscription.name, subscriptionMatcher(subscription));
    const heads = new Map<string, PendingDelivery>();
    for (const delivery of await this.events.pending(subscription.name)) if (!heads.has(delivery.subject)) heads.set(delivery.subject, delivery);
    const now = await this.events.now();
    const due = [...heads.values()].filter((delivery) => delivery.nextAttemptAt.getTime() <= now.getTime());
    if (due.length === 0) return matched > 0;
    const events = await this.events.events(due.map((delivery) => delivery.seq));
    let delivered = 0;
    for (let at = 0; at < due.length && this.leading && !this.stopped; at += PARALLEL_SUBJECTS) {
      const outcomes = await Promise.all(due.slice(at, at + PARALLEL_SUBJECTS).map((delivery) => this.deliver(subscription, delivery, events.get(delivery.seq))));
      delivered += outcomes.filter(Boolean).length;
    }
    return matched > 0 || delivered > 0;
  }

  /** One attempt; the outcome is stored before the next event of the subject is tried. */
  private async deliver(subscription: WebhookSubscription, delivery: PendingDelivery, event: StoredEvent | undefined): Promise<boolean> {
    if (!event) {
      // the event is gone from the outbox: nothing can be sent any more
      await this.events.failed(subscription.name, delivery.seq, 'the event is no longer in the store', null);
      return false;
    }
    const problem = await this.send(subscription, event);
    if (problem === null) {
      await this.events.delivered(subscription.name, delivery.seq);
      this.metrics.webhookDelivery(subscription.name, 'delivered');
      return true;
    }
    const attempts = delivery.attempts + 1;
    const dead = attempts >= this.config.WEBHOOK_MAX_ATTEMPTS;
    const retryAt = dead ? null : new Date((await this.events.now()).getTime() + backoffMs(attempts, this.config.WEBHOOK_BACKOFF_MS, this.config.WEBHOOK_BACKOFF_MAX_MS));
    await this.events.failed(subscription.name, delivery.seq, problem, retryAt);
    this.metrics.webhookDelivery(subscription.name, dead ? 'dead' : 'failed');
    if (dead) this.logger.warn(`webhook ${subscription.name}: event ${event.id} (${event.type} ${event.subject}) is dead after ${attempts} attempts: ${problem}`);
    else this.logger.debug(`webhook ${subscription.name}: event ${event.id} failed (attempt ${attempts}), tried again at ${retryAt!.toISOString()}: ${problem}`);
    return false;
  }

  /** POSTs the event in CloudEvents' binary mode, signed; null when the receiver answered 2xx, else what went wrong. */
  private async send(subscription: WebhookSubscription, event: StoredEvent): Promise<string | null> {
    const message = HTTP.binary(toCloudEvent(event));
    const body = typeof message.body === 'string' ? message.body : JSON.stringify(message.body);
    const headers: Record<string, string> = { ...(message.headers as Record<string, string>), [SIGNATURE_HEADER]: signature(subscription.secret, body, Math.floor(Date.now() / 1000)) };
    try {
      const response = await fetch(subscription.url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(this.config.WEBHOOK_TIMEOUT_SECONDS * 1000) });
      await response.body?.cancel();
      return response.ok ? null : `the receiver answered HTTP ${response.status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      return `the receiver could not be reached: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
    }
  }
}

/** The wait before attempt `attempts + 1`: base × 2^(attempts − 1), at most `maxMs`. */
export function backoffMs(attempts: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(30, attempts - 1));
}
