import { AppError } from '@app/common';

/** Writes change a release (install, upgrade, rollback, uninstall); reads are everything else (template, status, get, history). */
export type HelmPriority = 'write' | 'read';

export interface HelmPoolOptions {
  /** At most this many helm processes at once. */
  concurrency: number;
  /** How long a call waits for a slot before it is refused with 503 unavailable. */
  queueSeconds: number;
  /** At most this many calls wait; one more is refused at once. */
  maxQueued?: number;
}

/** The pool's numbers, for metrics and logs. */
export interface HelmPoolStats {
  concurrency: number;
  inUse: number;
  writesInUse: number;
  queued: number;
  queuedWrites: number;
  /** Calls refused so far because no slot came free in time or the queue was full. */
  refused: number;
}

interface Waiter {
  priority: HelmPriority;
  start: () => void;
  timer?: NodeJS.Timeout;
}

/**
 * A bounded set of slots for helm processes with a bounded FIFO queue. Writes go ahead of queued
 * reads, and one slot (when there are two or more) is kept for writes: a flood of validates or
 * status reads never holds every slot, so a write waits at most for other writes.
 */
export class HelmPool {
  private inUse = 0;
  private writesInUse = 0;
  private refused = 0;
  private readonly writes: Waiter[] = [];
  private readonly reads: Waiter[] = [];
  private readonly maxQueued: number;

  constructor(private readonly options: HelmPoolOptions) {
    if (!(options.concurrency >= 1)) throw new Error(`helm concurrency must be at least 1, not ${options.concurrency}`);
    this.maxQueued = options.maxQueued ?? Math.max(64, options.concurrency * 16);
  }

  get stats(): HelmPoolStats {
    return {
      concurrency: this.options.concurrency,
      inUse: this.inUse,
      writesInUse: this.writesInUse,
      queued: this.writes.length + this.reads.length,
      queuedWrites: this.writes.length,
      refused: this.refused,
    };
  }

  /** Runs `fn` once a slot is free; refuses with 503 unavailable (and a retry hint) when none comes free in time. */
  async run<T>(priority: HelmPriority, fn: () => Promise<T>): Promise<T> {
    await this.acquire(priority);
    try {
      return await fn();
    } finally {
      this.release(priority);
    }
  }

  private acquire(priority: HelmPriority): Promise<void> {
    if (this.writes.length === 0 && (priority === 'write' || this.reads.length === 0) && this.canStart(priority)) {
      this.take(priority);
      return Promise.resolve();
    }
    if (this.writes.length + this.reads.length >= this.maxQueued) return Promise.reject(this.busy('the queue is full'));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { priority, start: () => resolve() };
      const queue = priority === 'write' ? this.writes : this.reads;
      queue.push(waiter);
      waiter.timer = setTimeout(() => {
        queue.splice(queue.indexOf(waiter), 1);
        reject(this.busy(`no slot came free within ${this.options.queueSeconds}s`));
      }, this.options.queueSeconds * 1000);
    });
  }

  private canStart(priority: HelmPriority): boolean {
    if (this.inUse >= this.options.concurrency) return false;
    if (priority === 'write' || this.options.concurrency < 2) return true;
    return this.inUse - this.writesInUse < this.options.concurrency - 1;
  }

  private take(priority: HelmPriority): void {
    this.inUse++;
    if (priority === 'write') this.writesInUse++;
  }

  private release(priority: HelmPriority): void {
    this.inUse--;
    if (priority === 'write') this.writesInUse--;
    this.dispatch();
  }

  private dispatch(): void {
    for (const queue of [this.writes, this.reads]) {
      while (queue.length > 0 && this.canStart(queue[0].priority)) {
        const waiter = queue.shift()!;
        clearTimeout(waiter.timer);
        this.take(waiter.priority);
        waiter.start();
      }
    }
  }

  private busy(why: string): AppError {
    this.refused++;
    const { concurrency, queueSeconds } = this.options;
    const retryAfter = Math.max(1, Math.ceil(queueSeconds / 2));
    return new AppError(
      'unavailable',
      `agent-manager is busy: all ${concurrency} helm processes are in use and ${this.writes.length + this.reads.length} calls are waiting (${why}); retry in ${retryAfter}s`,
      [],
      retryAfter,
    );
  }
}
