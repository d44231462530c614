import { describe, expect, it } from '@jest/globals';
import { PeriodicSweep } from './periodic-sweep.js';

/** A pass the test ends by hand. */
function heldPass() {
  let calls = 0;
  let finish!: (error?: Error) => void;
  const pass = () => {
    calls++;
    return new Promise<void>((resolve, reject) => (finish = (error) => (error ? reject(error) : resolve())));
  };
  return { pass, calls: () => calls, finish: (error?: Error) => finish(error) };
}

describe('PeriodicSweep', () => {
  it('runs one pass at a time: a call while one runs gets that one', async () => {
    const held = heldPass();
    const sweep = new PeriodicSweep(held.pass, () => undefined);
    const first = sweep.run();
    const second = sweep.run();
    expect(second).toBe(first);
    expect(held.calls()).toBe(1);
    held.finish();
    await first;
    void sweep.run();
    expect(held.calls()).toBe(2);
  });

  it('never rejects: a failed pass is told to its handler, and the next one runs', async () => {
    const held = heldPass();
    const failures: string[] = [];
    const sweep = new PeriodicSweep(held.pass, (error) => failures.push(error.message));
    const run = sweep.run();
    held.finish(new Error('store gone'));
    await expect(run).resolves.toBeUndefined();
    expect(failures).toEqual(['store gone']);
    void sweep.run();
    expect(held.calls()).toBe(2);
  });

  it('stop waits for the running pass and says stopped to it', async () => {
    const held = heldPass();
    const sweep = new PeriodicSweep(held.pass, () => undefined);
    void sweep.run();
    let stopped = false;
    const stopping = sweep.stop().then(() => (stopped = true));
    await Promise.resolve();
    expect(sweep.stopped).toBe(true);
    expect(stopped).toBe(false);
    held.finish();
    await stopping;
    expect(stopped).toBe(true);
  });
});
