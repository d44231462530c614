import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable } from '@nestjs/common';
import { AppError } from '@app/common';

/** Closes on shutdown: running state changes finish, new ones are refused so another replica answers them. */
@Injectable()
export class ShutdownGate {
  private running = 0;
  private closing = false;
  private idleWaiters: (() => void)[] = [];

  /** Lets one state change in, or refuses it (503) while shutting down; the returned function lets it out. */
  enter(): () => void {
    if (this.closing) throw new AppError('unavailable', 'agent-manager is shutting down and takes no new writes: retry, another replica will answer');
    this.running++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.running--;
      if (this.running === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    };
  }

  /** Stops letting state changes in; resolves true once the running ones finished, false when the timeout came first. */
  async drain(timeoutMs: number): Promise<boolean> {
    this.closing = true;
    if (this.running === 0) return true;
    const idle = new Promise<true>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const timer = new AbortController();
    try {
      return await Promise.race([idle, sleep(timeoutMs, false, { signal: timer.signal })]);
    } finally {
      timer.abort();
    }
  }
}
