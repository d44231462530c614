import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppError, type KubeIdentity } from '@app/common';
import { clusterRefusal, helmFailure } from './helm-errors.js';
import { installArgs, pullArgs, upgradeInstallArgs, versionArgs, type WriteCommand } from './helm-commands.js';
import { HelmPool, type HelmPoolStats, type HelmPriority } from './helm-pool.js';
import { HelmSpawner } from './helm-spawner.js';
import type { ChartSource, HelmVersion, HistoryEntry, ReleaseInfo, ReleaseRef, WriteOptions } from './helm.types.js';

export interface HelmClientOptions {
  bin: string;
  kubeconfig?: string;
  timeoutSeconds: number;
  /**
   * Why helm cannot reach a cluster (no kubeconfig, a missing file), or undefined when it can:
   * then every helm run against the cluster is refused with that message instead of spawning
   * helm, which would otherwise fall back to localhost:8080.
   */
  clusterProblem?: () => string | undefined | Promise<string | undefined>;
  /** At most this many helm processes at once (HELM_CONCURRENCY); default twice the cores. */
  concurrency?: number;
  /** Wraps every helm process (its span, metrics and log line): runs `spawn` and answers what it answered. */
  observe?: <T extends { exitCode: number; stderr: string }>(args: readonly string[], spawn: () => Promise<T>) => Promise<T>;
  /** How long a call waits for a free helm slot before 503 unavailable (HELM_QUEUE_SECONDS); default 10. */
  queueSeconds?: number;
  /**
   * Whom a helm run impersonates (KUBE_IMPERSONATE), asked once per run: `--kube-as-user` and one
   * `--kube-as-group` per group; undefined runs with the kubeconfig's own credentials.
   */
  identity?: () => KubeIdentity | undefined;
}

export const DEFAULT_HELM_QUEUE_SECONDS = 10;

/** HELM_CONCURRENCY's default: twice the cores (helm mostly waits on the API server). */
export function defaultHelmConcurrency(): number {
  return 2 * availableParallelism();
}

export interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

const VALUES_PREFIX = 'agent-manager-values-';

/** The only place that runs a process: the real helm binary, always with an argument array. */
export class HelmClient {
  private detected?: Promise<HelmVersion>;
  private readonly pool: HelmPool;
  /** Starts helm from a small helper process: a fork of the service would block its event loop. */
  private readonly spawner = new HelmSpawner();

  constructor(private readonly options: HelmClientOptions) {
    this.pool = new HelmPool({
      concurrency: options.concurrency ?? defaultHelmConcurrency(),
      queueSeconds: options.queueSeconds ?? DEFAULT_HELM_QUEUE_SECONDS,
    });
  }

  /** The helm process pool's numbers (in use, queued, refused), for metrics. */
  get poolStats(): HelmPoolStats {
    return this.pool.stats;
  }

  /** Ends the helper process helm is started from, stopping helm runs still going (the next run starts it again). */
  close(): Promise<void> {
    return this.spawner.close();
  }

  get bin(): string {
    return this.options.bin;
  }

  /**
   * Detects the helm version once; writes use it to pick flags that differ between 3 and 4. Calls
   * that arrive while it is being detected share that one `helm version` (a start-up asks from
   * several places at once); a failure is not kept, so the next call tries again.
   */
  version(): Promise<HelmVersion> {
    this.detected ??= this.detect().catch((error: unknown) => {
      this.detected = undefined;
      throw error;
    });
    return this.detected;
  }

  private async detect(): Promise<HelmVersion> {
    const result = await this.run(['version', '--template', '{{.Version}}'], 30, 'write');
    if (result.exitCode !== 0) throw helmFailure('version', result.stderr);
    const version = result.stdout.trim();
    const major = Number(/^v?(\d+)\./.exec(version)?.[1]);
    if (!(major >= 3)) throw new AppError('backend_error', `cannot read the helm version from "${version}" (${this.bin})`);
    return { version, major };
  }

  /**
   * Fetches a chart from a registry or repository into `destination`, unpacked (`helm pull --untar`):
   * no cluster, no impersonation (the service's own fetch, not the caller's). Answers helm's exit
   * code and message; chart-source.ts decides what a failure means.
   */
  async pull(chart: ChartSource, destination: string, options: { plainHttp?: boolean; timeoutSeconds?: number } = {}): Promise<RunResult> {
    const args = pullArgs(chart, destination, options);
    return this.pool.run('read', () => this.observed(args, options.timeoutSeconds ?? 60));
  }

  /** Renders the chart locally (no cluster): the manifests a write would apply. */
  async template(release: ReleaseRef, chart: ChartSource, values: object): Promise<string> {
    return this.withValues('read', values, async (file) => {
      const args = ['template', release.name, chart.ref, '--namespace', release.namespace, '--values', file, ...versionArgs(chart)];
      const result = await this.exec(args);
      if (result.exitCode !== 0) throw helmFailure('template', result.stderr);
      return result.stdout;
    });
  }

  /**
   * Installs a new release; helm itself refuses a name in use (mapped to conflict). The answer
   * is the release helm recorded, its rendered manifest included: one helm process per create.
   */
  async install(release: ReleaseRef, chart: ChartSource, values: object, options: WriteOptions = {}): Promise<ReleaseInfo> {
    await this.requireCluster();
    const { major } = await this.version();
    return this.withValues('write', values, async (file) => {
      const args = installArgs(this.writeCommand(release, chart, file, major, options));
      const result = await this.exec(args);
      if (result.exitCode !== 0) {
        if (NAME_IN_USE.test(result.stderr)) throw releaseExists(release);
        throw helmFailure('install', result.stderr);
      }
      return parseRelease(result.stdout);
    });
  }

  async upgradeInstall(release: ReleaseRef, chart: ChartSource, values: object, options: WriteOptions = {}): Promise<ReleaseInfo> {
    await this.requireCluster();
    const { major } = await this.version();
    return this.withValues('write', values, async (file) => {
      const args = upgradeInstallArgs(this.writeCommand(release, chart, file, major, options));
      const result = await this.exec(args);
      if (result.exitCode !== 0) throw helmFailure('upgrade --install', result.stderr);
      return parseRelease(result.stdout);
    });
  }

  /** The values helm holds for the release's current revision (user-supplied only). */
  async getValues(release: ReleaseRef, revision?: number): Promise<Record<string, unknown>> {
    await this.requireCluster();
    const args = ['get', 'values', release.name, '--namespace', release.namespace, '--output', 'json'];
    if (revision !== undefined) args.push('--revision', String(revision));
    const result = await this.run(args, 60);
    if (result.exitCode !== 0) throw this.readFailure('get values', release, result.stderr);
    return (JSON.parse(result.stdout || 'null') as Record<string, unknown> | null) ?? {};
  }

  async history(release: ReleaseRef): Promise<HistoryEntry[]> {
    await this.requireCluster();
    const result = await this.run(['history', release.name, '--namespace', release.namespace, '--output', 'json', '--max', '256'], 60);
    if (result.exitCode !== 0) throw this.readFailure('history', release, result.stderr);
    return JSON.parse(result.stdout || '[]') as HistoryEntry[];
  }

  /** The release's status (of one revision when given: its values and manifest), or null when no such release exists. */
  async status(release: ReleaseRef, revision?: number): Promise<ReleaseInfo | null> {
    await this.requireCluster();
    const args = ['status', release.name, '--namespace', release.namespace, '--output', 'json'];
    if (revision !== undefined) args.push('--revision', String(revision));
    const result = await this.run(args, 60);
    if (result.exitCode !== 0) {
      if (isReleaseNotFound(result.stderr)) return null;
      throw helmFailure('status', result.stderr);
    }
    return parseRelease(result.stdout);
  }

  async rollback(release: ReleaseRef, revision: number, options: WriteOptions = {}): Promise<void> {
    await this.requireCluster();
    const { major } = await this.version();
    const args = [
      'rollback', release.name, String(revision),
      '--namespace', release.namespace,
      ...(major >= 4 ? ['--force-conflicts'] : []),
      '--timeout', `${options.timeoutSeconds ?? this.options.timeoutSeconds}s`,
      ...(options.wait ? ['--wait'] : []),
    ];
    const result = await this.run(args, undefined, 'write');
    if (result.exitCode !== 0) throw helmFailure('rollback', result.stderr);
  }

  /** Uninstalls the release; false when there was none to remove. */
  async uninstall(release: ReleaseRef, options: WriteOptions = {}): Promise<boolean> {
    await this.requireCluster();
    const args = ['uninstall', release.name, '--namespace', release.namespace, '--timeout', `${options.timeoutSeconds ?? this.options.timeoutSeconds}s`];
    if (options.wait) args.push('--wait');
    const result = await this.run(args, undefined, 'write');
    if (result.exitCode !== 0) {
      if (isReleaseNotFound(result.stderr)) return false;
      throw helmFailure('uninstall', result.stderr);
    }
    return true;
  }

  private async requireCluster(): Promise<void> {
    const problem = await this.options.clusterProblem?.();
    if (problem) throw new AppError('backend_error', problem);
  }

  /** Every release in every namespace whose current revision is in any state (helm 4 has no --all: each state is named). */
  async listAll(): Promise<{ name: string; namespace: string; revision: string; status: string; chart: string }[]> {
    await this.requireCluster();
    const args = ['list', '--all-namespaces', '--deployed', '--failed', '--pending', '--uninstalling', '--output', 'json', '--max', '100000'];
    const result = await this.run(args, 60);
    if (result.exitCode !== 0) throw helmFailure('list', result.stderr);
    return JSON.parse(result.stdout || '[]') as { name: string; namespace: string; revision: string; status: string; chart: string }[];
  }

  private readFailure(action: string, release: ReleaseRef, stderr: string): AppError {
    if (isReleaseNotFound(stderr)) return new AppError('not_found', `helm has no release ${release.namespace}/${release.name}`).fromEnvironment();
    return helmFailure(action, stderr);
  }

  /** A write's command as helm-commands.ts builds it: waits only when asked, within the call's or the service's timeout. */
  private writeCommand(release: ReleaseRef, chart: ChartSource, valuesFile: string, major: number, options: WriteOptions): WriteCommand {
    return { release, chart, valuesFile, major, wait: options.wait ?? false, timeoutSeconds: options.timeoutSeconds ?? this.options.timeoutSeconds };
  }

  /**
   * Removes values files left by a process that was killed while helm ran (they hold the
   * agent's system message). Only folders older than any helm run could be are touched.
   */
  async removeStaleValues(): Promise<number> {
    const cutoff = Date.now() - (this.options.timeoutSeconds + 120) * 1000;
    let removed = 0;
    for (const name of await readdir(tmpdir()).catch(() => [] as string[])) {
      if (!name.startsWith(VALUES_PREFIX)) continue;
      const dir = join(tmpdir(), name);
      const info = await stat(dir).catch(() => null);
      if (info?.isDirectory() && info.mtimeMs < cutoff) {
        await rm(dir, { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Takes a helm slot, then writes the values file for `fn` (so queued calls hold no file). */
  private withValues<T>(priority: HelmPriority, values: object, fn: (file: string) => Promise<T>): Promise<T> {
    return this.pool.run(priority, () => this.withValuesFile(values, fn));
  }

  private async withValuesFile<T>(values: object, fn: (file: string) => Promise<T>): Promise<T> {
    const dir = await mkdtemp(join(tmpdir(), VALUES_PREFIX));
    const file = join(dir, 'values.json');
    try {
      // helm reads the file as YAML, where a literal U+2028/U+2029 is a line break that folds the
      // spaces around it away; as JSON escapes they arrive unchanged.
      await writeFile(file, JSON.stringify(values).replace(/[\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`), { mode: 0o600 });
      return await fn(file);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Runs helm in a pool slot: reads (the default) wait behind writes and never take the slot kept for them. */
  private run(args: string[], timeoutSeconds?: number, priority: HelmPriority = 'read'): Promise<RunResult> {
    return this.pool.run(priority, () => this.exec(args, timeoutSeconds));
  }

  /**
   * Runs helm now; only for callers that hold a pool slot. Impersonating, a refusal of the cluster's
   * RBAC is thrown as forbidden with the cluster's message (whatever the command).
   */
  private async exec(args: string[], timeoutSeconds?: number): Promise<RunResult> {
    const identity = this.options.identity?.();
    if (!identity) return this.observed(args, timeoutSeconds);
    const result = await this.observed([...args, '--kube-as-user', identity.user, ...identity.groups.flatMap((group) => ['--kube-as-group', group])], timeoutSeconds);
    const refusal = result.exitCode === 0 ? undefined : clusterRefusal(args[0], result.stderr, identity);
    if (refusal) throw refusal;
    return result;
  }

  /** One helm process, wrapped by `observe` (span, metrics, log line) when given. */
  private observed(args: string[], timeoutSeconds?: number): Promise<RunResult> {
    const observe = this.options.observe;
    return observe ? observe(args, () => this.spawn(args, timeoutSeconds)) : this.spawn(args, timeoutSeconds);
  }

  private async spawn(args: string[], timeoutSeconds = this.options.timeoutSeconds + 30): Promise<RunResult> {
    const env: Record<string, string> = {};
    if (this.options.kubeconfig) env.KUBECONFIG = this.options.kubeconfig;
    const result = await this.spawner.run(this.bin, args, env, timeoutSeconds * 1000);
    if (result.timedOut) return { stdout: '', stderr: `Error: helm did not finish within ${timeoutSeconds}s`, exitCode: 124 };
    if (result.error !== undefined) return { stdout: '', stderr: `Error: cannot run ${this.bin}: ${result.error}`, exitCode: 127 };
    return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
  }
}

/** helm install's words for a release name that exists (helm 3 and 4). */
const NAME_IN_USE = /cannot re-?use a name that is still in use/i;

function releaseExists(release: ReleaseRef): AppError {
  return new AppError(
    'conflict',
    `a helm release ${release.namespace}/${release.name} already exists that agent-manager does not manage: choose another name, or remove that release first (helm uninstall ${release.name} --namespace ${release.namespace})`,
    [{ path: 'name', message: 'a helm release with this name exists in this namespace' }],
  );
}

/** helm's own words for "no such release" (status, get, history, uninstall; helm 3 and 4): an answer, not a failure. */
export function isReleaseNotFound(stderr: string): boolean {
  return /release: not found/i.test(stderr);
}

function parseRelease(stdout: string): ReleaseInfo {
  const raw = JSON.parse(stdout) as {
    name: string;
    namespace: string;
    version: number;
    info?: { status?: string; description?: string };
    chart?: { metadata?: { name?: string; version?: string } };
    config?: Record<string, unknown> | null;
    manifest?: string;
  };
  return {
    name: raw.name,
    namespace: raw.namespace,
    revision: raw.version,
    status: raw.info?.status ?? 'unknown',
    description: raw.info?.description ?? '',
    chart: raw.chart?.metadata ? `${raw.chart.metadata.name}-${raw.chart.metadata.version}` : undefined,
    values: raw.config ?? {},
    manifest: raw.manifest ?? '',
  };
}
