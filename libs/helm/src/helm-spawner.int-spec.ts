import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HelmSpawner } from './helm-spawner.js';

/**
 * The spawner's own process handling, with a stand-in for helm (named as such: a shell script that
 * runs until it is signalled, as a helm write waiting on the cluster does, and notes the signal).
 */
describe(HelmSpawner.name, () => {
  let dir: string;
  let longRun: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'spawner-'));
    longRun = join(dir, 'long-helm.sh');
    writeFileSync(longRun, `#!/bin/sh\necho $$ > "$1/pid"\ntrap 'echo TERM > "$1/signal"; exit 143' TERM\nwhile :; do sleep 0.1; done\n`);
    chmodSync(longRun, 0o755);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Still running: a process that exited but is not reaped yet (a zombie, state Z) has stopped too. */
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
    } catch {
      return false;
    }
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
    } catch {
      return false;
    }
  };

  it('stops a helm run still going when it closes (SIGTERM, so helm can stop cleanly) instead of leaving it orphaned', async () => {
    const spawner = new HelmSpawner();
    const running = spawner.run(longRun, [dir], {}, 60_000);
    while (!existsSync(join(dir, 'pid'))) await new Promise((resolve) => setTimeout(resolve, 20));
    const pid = Number(readFileSync(join(dir, 'pid'), 'utf8'));
    await spawner.close();
    expect(await running).toMatchObject({ exitCode: 127, error: 'the helm spawner was closed' });
    // Gone, not orphaned, and told with SIGTERM: on a loaded machine the stand-in's trap and the
    // kernel may finish a moment after close() returned.
    const signalled = join(dir, 'signal');
    for (let waited = 0; (alive(pid) || !existsSync(signalled)) && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(readFileSync(signalled, 'utf8').trim()).toBe('TERM');
    expect(alive(pid)).toBe(false);
  });

  it('an idle helper nobody closed does not keep the process running: neither it nor its IPC channel holds a jest run open', async () => {
    const unclosed = new HelmSpawner();
    expect(await unclosed.run('/bin/echo', ['idle'], {}, 10_000)).toMatchObject({ exitCode: 0, stdout: 'idle' });
    const helper = (unclosed as unknown as { helper: ChildProcess }).helper;
    expect(helper.connected).toBe(true);
    // Node lists only the handles that keep the process running: the helper's process and its IPC pipe are not among them.
    const holding = (process as unknown as { _getActiveHandles(): { fd?: number }[] })._getActiveHandles();
    expect(holding).not.toContain(helper);
    expect(holding.filter((h) => h.constructor.name === 'Pipe' && h.fd === (helper.channel as unknown as { fd?: number } | undefined)?.fd)).toEqual([]);
    await unclosed.close();
  });

  it('closes at once when nothing runs', async () => {
    const spawner = new HelmSpawner();
    expect(await spawner.run('/bin/echo', ['hello'], {}, 10_000)).toMatchObject({ exitCode: 0, stdout: 'hello' });
    await spawner.close();
    // The next run starts a new helper.
    expect(await spawner.run('/bin/echo', ['again'], {}, 10_000)).toMatchObject({ exitCode: 0, stdout: 'again' });
    await spawner.close();
  });
});
