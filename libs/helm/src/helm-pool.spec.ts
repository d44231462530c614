import { describe, expect, it } from '@jest/globals';
import { AppError } from '@app/common';
import { HelmPool, type HelmPriority } from './helm-pool.js';

/** A call that holds its slot until the test lets it go, recording the order calls started in. */
function gate(pool: HelmPool, priority: HelmPriority, label: string, started: string[]) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  const result = pool.run(priority, async () => {
    started.push(label);
    await done;
    return label;
  });
  return { result, finish };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe(HelmPool.name, () => {
  it('never runs more than its concurrency at once, and starts queued calls in arrival order', async () => {
    const pool = new HelmPool({ concurrency: 3, queueSeconds: 10 });
    const started: string[] = [];
    const calls = ['w1', 'w2', 'w3', 'w4', 'w5'].map((l) => gate(pool, 'write', l, started));
    await tick();
    expect(started).toEqual(['w1', 'w2', 'w3']);
    expect(pool.stats).toMatchObject({ inUse: 3, queued: 2 });
    calls[1].finish();
    await tick();
    expect(started).toEqual(['w1', 'w2', 'w3', 'w4']);
    for (const c of calls) c.finish();
    await expect(Promise.all(calls.map((c) => c.result))).resolves.toEqual(['w1', 'w2', 'w3', 'w4', 'w5']);
    expect(pool.stats).toMatchObject({ inUse: 0, queued: 0 });
  });

  it('keeps one slot for writes: a flood of reads never holds them all', async () => {
    const pool = new HelmPool({ concurrency: 2, queueSeconds: 10 });
    const started: string[] = [];
    const reads = Array.from({ length: 20 }, (_, i) => gate(pool, 'read', `r${i}`, started));
    await tick();
    expect(started).toEqual(['r0']);
    const write = gate(pool, 'write', 'w', started);
    await tick();
    expect(started).toEqual(['r0', 'w']);
    write.finish();
    for (const r of reads) r.finish();
    await Promise.all([write.result, ...reads.map((r) => r.result)]);
  });

  it('starts a queued write before reads that queued earlier', async () => {
    const pool = new HelmPool({ concurrency: 1, queueSeconds: 10 });
    const started: string[] = [];
    const first = gate(pool, 'read', 'r0', started);
    const read = gate(pool, 'read', 'r1', started);
    const write = gate(pool, 'write', 'w', started);
    await tick();
    first.finish();
    await tick();
    expect(started).toEqual(['r0', 'w']);
    write.finish();
    read.finish();
    await Promise.all([first.result, read.result, write.result]);
    expect(started).toEqual(['r0', 'w', 'r1']);
  });

  it('refuses a call that gets no slot within the queue time with 503 unavailable and a retry hint', async () => {
    const pool = new HelmPool({ concurrency: 1, queueSeconds: 0.05 });
    const started: string[] = [];
    const busy = gate(pool, 'write', 'w', started);
    const refused = await pool.run('read', async () => 'never').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'unavailable', retryAfterSeconds: 1, message: expect.stringMatching(/all 1 helm processes are in use.*retry in 1s/) });
    expect(started).toEqual(['w']);
    expect(pool.stats).toMatchObject({ queued: 0, refused: 1 });
    busy.finish();
    await expect(pool.run('read', async () => 'now')).resolves.toBe('now');
  });

  it('refuses at once when the queue is full', async () => {
    const pool = new HelmPool({ concurrency: 1, queueSeconds: 10, maxQueued: 2 });
    const started: string[] = [];
    const calls = ['a', 'b', 'c'].map((l) => gate(pool, 'write', l, started));
    await expect(pool.run('write', async () => 'd')).rejects.toMatchObject({ code: 'unavailable', message: expect.stringMatching(/queue is full/) });
    for (const c of calls) c.finish();
    await Promise.all(calls.map((c) => c.result));
  });

  it('frees the slot of a call that failed', async () => {
    const pool = new HelmPool({ concurrency: 1, queueSeconds: 1 });
    await expect(pool.run('write', async () => Promise.reject(new Error('helm crashed')))).rejects.toThrow('helm crashed');
    await expect(pool.run('write', async () => 'next')).resolves.toBe('next');
  });
});
