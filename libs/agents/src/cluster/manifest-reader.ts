import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { OnModuleDestroy } from '@nestjs/common';
import { AppError } from '@app/common';
import type { LiveAgent } from '@app/kube';

/**
 * The worker thread's program (manifest-reader-worker.mjs, beside this file in the sources, in tsc's
 * output and in the bundle): the `yaml` package needs tens of seconds for some large manifests, which
 * must never block the event loop.
 */
const WORKER = new URL('./manifest-reader-worker.mjs', import.meta.url);

interface Job {
  id: number;
  manifest: string;
  resolve: (agent: LiveAgent | null) => void;
  reject: (error: Error) => void;
}

type Reply = { id: number; agent: LiveAgent | null } | { id: number; error: string };

/**
 * Finds the kagent Agent in a rendered manifest, parsed off the main thread: one worker, started
 * on first use, one manifest at a time. A parse that exceeds the time limit ends the worker (the
 * next read starts a new one) and is refused as a backend error. One per service (AgentsModule
 * provides it): status reads and the reconciler share its worker, which ends with the service.
 */
export class ManifestReader implements OnModuleDestroy {
  private worker?: Worker;
  private readonly queue: Job[] = [];
  private current?: { job: Job; timer: NodeJS.Timeout };
  private nextId = 1;

  constructor(private readonly timeoutMs = 10_000) {}

  agentIn(manifest: string): Promise<LiveAgent | null> {
    if (!manifest.trim()) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, manifest, resolve, reject });
      this.pump();
    });
  }

  onModuleDestroy(): Promise<void> {
    return this.close();
  }

  /** Ends the worker (pending reads fail); the next read starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.fail(new AppError('unavailable', 'the manifest reader was closed', [], 1));
    await worker?.terminate();
  }

  private pump(): void {
    if (this.current || this.queue.length === 0) return;
    const job = this.queue.shift()!;
    const timer = setTimeout(() => this.timedOut(), this.timeoutMs);
    this.current = { job, timer };
    this.start().postMessage({ id: job.id, manifest: job.manifest });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER, { workerData: { yaml: createRequire(import.meta.url).resolve('yaml') } });
    worker.on('message', (reply: Reply) => this.settle(reply));
    worker.on('error', (error) => this.crashed(worker, error));
    worker.on('exit', (code) => this.crashed(worker, new Error(`the manifest reader stopped (exit code ${code})`)));
    // After the listeners: adding a 'message' listener refs the worker's port again, and that port
    // kept a process (a jest run, a command) alive for good when no one closed the reader. While a
    // parse runs, its time-limit timer keeps the process running.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private settle(reply: Reply): void {
    const current = this.current;
    if (!current || current.job.id !== reply.id) return;
    clearTimeout(current.timer);
    this.current = undefined;
    if ('error' in reply) current.job.reject(new AppError('backend_error', `the release manifest is not valid YAML: ${reply.error}`));
    else current.job.resolve(reply.agent);
    this.pump();
  }

  private timedOut(): void {
    const current = this.current;
    if (!current) return;
    this.current = undefined;
    const worker = this.worker;
    this.worker = undefined;
    void worker?.terminate();
    current.job.reject(new AppError('backend_error', `reading the release manifest (${current.job.manifest.length} characters) took longer than ${this.timeoutMs / 1000}s`));
    this.pump();
  }

  private crashed(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.fail(new AppError('backend_error', `reading the release manifest failed: ${error.message}`));
  }

  private fail(error: AppError): void {
    if (this.current) {
      clearTimeout(this.current.timer);
      this.current.job.reject(error);
      this.current = undefined;
    }
    for (const job of this.queue.splice(0)) job.reject(error);
  }
}
