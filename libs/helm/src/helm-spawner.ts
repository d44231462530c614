import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What one helm run left: its output and exit code (124 when it timed out, 127 when it could not start). */
export interface SpawnResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  timedOut: boolean;
  /** Set when the binary could not be started at all. */
  error?: string;
}

/**
 * The helper process's program (helm-spawner-helper.mjs, beside this file in the sources, in tsc's
 * output and in the bundle): a small Node process of its own, so that forking helm never forks the
 * service (50–150 ms of blocked event loop per helm run under load).
 */
const HELPER = fileURLToPath(new URL('./helm-spawner-helper.mjs', import.meta.url));

/** At close, how long helm runs still going get after SIGTERM before SIGKILL (within the pod's 15 s margin after SHUTDOWN_TIMEOUT_SECONDS). */
export const STOP_GRACE_MS = 5_000;

interface Pending {
  resolve: (result: SpawnResult) => void;
}

type Reply = { id: number; error: string } | { id: number; exitCode: number; timedOut: boolean; stdout: string; stderr: string };

/**
 * Starts helm processes from a helper process (started on first use, again after it died), so
 * the service's own event loop never pays for a fork. It ends with the service: when its IPC
 * channel closes it stops the helm runs still going (SIGTERM, SIGKILL after STOP_GRACE_MS) and exits.
 */
export class HelmSpawner {
  private helper?: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  run(bin: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<SpawnResult> {
    return new Promise((resolve) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve });
      const helper = this.start();
      this.holdWhileBusy(helper);
      if (helper.connected) helper.send({ id, bin, args, env, timeoutMs });
      else this.settle({ id, error: 'the helm spawner is not running' });
    });
  }

  /**
   * Ends the helper process; running calls answer that it stopped. helm runs still going get
   * SIGTERM and STOP_GRACE_MS to end before SIGKILL; this resolves once the helper exited.
   */
  async close(): Promise<void> {
    const helper = this.helper;
    this.helper = undefined;
    this.failAll('the helm spawner was closed');
    if (!helper?.connected) return;
    const exited = new Promise((resolve) => helper.once('exit', resolve));
    // Waiting for the helper keeps this process running: an idle helper was unreferenced, and a
    // command with no socket open would otherwise exit in the middle of its close.
    helper.ref();
    helper.disconnect();
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS + 2000).unref())]);
    helper.unref();
  }

  private start(): ChildProcess {
    if (this.helper && this.helper.exitCode === null && this.helper.signalCode === null) return this.helper;
    const helper = spawn(process.execPath, [HELPER, String(STOP_GRACE_MS)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: process.env });
    helper.on('message', (reply: Reply) => this.settle(reply));
    helper.on('exit', (code, signal) => {
      // A helper closed earlier exits later: its calls were answered then, the pending ones are a newer helper's.
      if (this.helper !== helper) return;
      this.helper = undefined;
      this.failAll(`the helm spawner stopped (${signal ?? `exit code ${code}`})`);
    });
    this.helper = helper;
    this.holdWhileBusy(helper);
    return helper;
  }

  /**
   * While a run is pending, the helper and its channel keep this process running: a command with
   * no socket open (store rebuild on SQLite) would otherwise exit in the middle of awaiting helm.
   * When idle, neither keeps the service (or a test) running.
   */
  private holdWhileBusy(helper: ChildProcess | undefined = this.helper): void {
    if (!helper) return;
    const channel = helper.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (this.pending.size > 0) {
      helper.ref();
      channel?.ref?.();
    } else {
      helper.unref();
      channel?.unref?.();
    }
  }

  private settle(reply: Reply): void {
    const waiting = this.pending.get(reply.id);
    if (!waiting) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.holdWhileBusy();
    if ('error' in reply) waiting.resolve({ stdout: '', stderr: '', exitCode: 127, timedOut: false, error: reply.error });
    else waiting.resolve({ stdout: stripFinalNewline(reply.stdout), stderr: stripFinalNewline(reply.stderr), exitCode: reply.exitCode, timedOut: reply.timedOut });
  }

  private failAll(why: string): void {
    for (const [id] of this.pending) this.settle({ id, error: why });
  }
}

/** As execa did: one trailing newline off. */
function stripFinalNewline(text: string): string {
  return text.endsWith('\r\n') ? text.slice(0, -2) : text.endsWith('\n') ? text.slice(0, -1) : text;
}
