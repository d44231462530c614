/**
 * Background work that runs as passes on a timer (the recovery sweep of operations, the changes
 * sweep): one pass at a time (a call while one runs gets that one), never rejecting (a rejection
 * from a timer nobody handles would end the process; `failed` hears it), the timer not keeping the
 * process alive, and on `stop` no new pass while the running one is awaited. A pass asks `stopped`
 * between its items, so a shutdown waits for one item, not for the rest.
 */
export class PeriodicSweep {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private halted = false;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly failed: (error: Error) => void,
  ) {}

  /** Runs a pass every `intervalMs`; `now`: one at once too. */
  start(intervalMs: number, { now = false } = {}): void {
    if (now) void this.run();
    this.timer = setInterval(() => void this.run(), intervalMs);
    this.timer.unref();
  }

  /** The running pass, or a new one. */
  run(): Promise<void> {
    this.running ??= this.pass()
      .catch((error: unknown) => {
        this.failed(error as Error);
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** No pass after this one; resolves once the running pass ended. */
  async stop(): Promise<void> {
    this.halted = true;
    clearInterval(this.timer);
    await this.running;
  }

  /** Whether `stop` was called: a pass ends between items then. */
  get stopped(): boolean {
    return this.halted;
  }
}
