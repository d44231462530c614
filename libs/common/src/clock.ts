/**
 * The time leases, idempotency keys and MCP sessions expire by. The service reads the host's
 * clock (SystemClock); a test moves a TestClock forward instead of waiting for a TTL to pass.
 * Timers (how long a request waits in line, how often a sweep runs) stay in real time: a clock
 * moved forward makes things expire, it does not make anyone wait less.
 */
export abstract class Clock {
  /** How far this clock runs ahead of the host's: 0, but for a test clock that was moved. */
  abstract get aheadMs(): number;

  nowMs(): number {
    return Date.now() + this.aheadMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }
}

/** The host's clock: what the service runs on. */
export class SystemClock extends Clock {
  get aheadMs(): number {
    return 0;
  }
}

/** The host's clock moved forward by what `advance` added: a test's way to let a TTL pass at once. */
export class TestClock extends Clock {
  private moved = 0;

  get aheadMs(): number {
    return this.moved;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`a clock moves forward only: advance(${ms})`);
    this.moved += ms;
  }
}
