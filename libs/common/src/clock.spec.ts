import { describe, expect, it } from '@jest/globals';
import { SystemClock, TestClock } from './clock.js';

describe(TestClock.name, () => {
  it('reads the host time until moved, then runs ahead by what advance added', () => {
    const clock = new TestClock();
    const before = Date.now();
    expect(clock.nowMs()).toBeGreaterThanOrEqual(before);
    clock.advance(60_000);
    clock.advance(1_000);
    expect(clock.aheadMs).toBe(61_000);
    expect(clock.now().getTime()).toBeGreaterThanOrEqual(before + 61_000);
    expect(clock.now().getTime()).toBeLessThan(Date.now() + 61_001);
  });

  it.each([-1, Number.NaN])('refuses to move back (advance(%s))', (ms) => {
    expect(() => new TestClock().advance(ms)).toThrow('a clock moves forward only');
  });
});

describe(SystemClock.name, () => {
  it('is the host clock', () => {
    const clock = new SystemClock();
    expect(clock.aheadMs).toBe(0);
    const before = Date.now();
    const read = clock.nowMs();
    expect(read).toBeGreaterThanOrEqual(before);
    expect(read).toBeLessThanOrEqual(Date.now());
  });
});
