import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { parse } from 'yaml';
import { AppConfig, AppError, Clock, PROJECT_ROOT } from '@app/common';
import { helmMessage } from './helm-errors.js';
import { HelmClient } from './helm.client.js';
import type { ChartSource } from './helm.types.js';

/**
 * A chart as helm installs it, and as the agent's record names it. `ref` (and `version`, helm's
 * --version) is what helm is given: a local chart directory, the unpacked copy of a chart pulled from
 * a registry, or another reference helm fetches itself (repo/name). `source` is the reference as
 * configured or asked (oci://…/agent), which the record keeps; `name` and `chartVersion` are the
 * chart's own (its Chart.yaml's), what get_agent and list_agents?chartVersion= show.
 */
export interface ResolvedChart extends ChartSource {
  source: string;
  name: string;
  chartVersion: string | null;
  /** Set when this is the bundled chart standing in for the configured one: why the configured one is not used. */
  fallback?: string;
}

/** What get_info shows: the chart writes use now, and, while the bundled chart stands in, why and until when. */
export interface ChartInEffect {
  /** The reference writes use: AGENT_CHART, or the bundled chart's path while it stands in. */
  ref: string;
  name: string | null;
  version: string | null;
  /** The folder helm reads the chart from, when it is one on this machine (its values.schema.json is digested for get_info). */
  dir: string | null;
  /** Present while the configured chart cannot be pulled and the bundled one is used. */
  fallback: { configured: string; configuredVersion: string | null; reason: string; retryAfter: string } | null;
}

/** How long writes use the bundled chart after a failed pull of the configured one, before the next write tries again. */
export const CHART_PULL_RETRY_MS = 60_000;

/** A pull of the configured chart that failed: what helm said and when, so the next attempt waits CHART_PULL_RETRY_MS. */
interface PullFailure {
  atMs: number;
  reason: string;
}

/**
 * Turns a chart reference and version into what helm installs from. A local path is used as it is.
 * An `oci://` reference is pulled once per (reference, version) with the real helm into a cache
 * folder (AGENT_CHART_CACHE_DIR), unpacked, and every later write reads that folder: no pull per
 * write, and a pull a previous process made is reused. Other references (repo/name) are given to
 * helm as they are.
 *
 * The configured chart (`configured()`, what writes use) falls back to the chart bundled with the
 * service (charts/agent) when the registry cannot be reached, said once per attempt in a warning,
 * and tried again on the first write after CHART_PULL_RETRY_MS. A chart a caller names (`resolve()`,
 * a rollout's target) never falls back: what cannot be pulled is refused, naming the reference.
 */
@Injectable()
export class ChartSources {
  private readonly logger = new Logger(ChartSources.name);
  /** Pulls under way, by cache key: callers at the same moment share one helm pull. */
  private readonly pulling = new Map<string, Promise<ResolvedChart>>();
  /** Charts pulled (or found in the cache) by this process, by cache key. */
  private readonly pulled = new Map<string, ResolvedChart>();
  private failure: PullFailure | undefined;
  /** The configured chart's attempt under way: concurrent writes wait for the one attempt (and its one warning). */
  private attempt: Promise<ResolvedChart> | undefined;

  constructor(
    private readonly config: AppConfig,
    private readonly helm: HelmClient,
    private readonly clock: Clock,
  ) {}

  /** The folder pulled charts are kept in. */
  get cacheDir(): string {
    return this.config.AGENT_CHART_CACHE_DIR ?? join(tmpdir(), `agent-manager-charts-${user()}`);
  }

  /** The chart bundled with the service (charts/agent of the repository or the image): the configured one's stand-in. */
  bundled(): ResolvedChart {
    return localChart(join(PROJECT_ROOT, 'charts', 'agent'));
  }

  /**
   * The chart writes use now. A local AGENT_CHART as configured (AGENT_CHART_VERSION is passed on as
   * helm's --version, as before); an OCI one pulled once; while that pull fails, the bundled chart
   * with `fallback` saying why.
   */
  async configured(): Promise<ResolvedChart> {
    const { ref, version } = this.config.agentChart;
    if (!isOci(ref)) return isLocal(ref) ? localChart(ref, version) : remoteChart(ref, version);
    const known = this.pulled.get(cacheKey(ref, version));
    if (known) return known;
    if (this.failure && this.clock.nowMs() - this.failure.atMs < CHART_PULL_RETRY_MS) return this.standIn(this.failure.reason);
    this.attempt ??= this.attemptConfigured(ref, version).finally(() => (this.attempt = undefined));
    return this.attempt;
  }

  /**
   * A chart a caller names, e.g. a rollout's target: `ref` as AGENT_CHART takes it (a local path, an
   * `oci://` reference with `version`, repo/name); undefined for the configured chart. An OCI chart is
   * pulled once per version and cached like the configured one; it never falls back: an unreachable
   * registry is 503 (try again later), a version the registry does not have 400, naming the reference.
   */
  async resolve(ref: string | undefined, version?: string): Promise<ResolvedChart> {
    if (ref === undefined || ref === this.config.AGENT_CHART) {
      ref = this.config.chartRef;
      version ??= this.config.AGENT_CHART_VERSION;
    }
    if (isOci(ref)) {
      if (version === undefined) throw new AppError('invalid_request', `chart ${ref}: an OCI chart needs a version: name the version to use, e.g. 0.6.1`, [{ path: 'version', message: 'required with an oci:// chart' }]);
      return this.pull(ref, version).catch((error: unknown) => {
        throw refusal(ref, version, error);
      });
    }
    if (!isLocal(ref)) return remoteChart(ref, version);
    const path = this.localPath(ref);
    if (!existsSync(join(path, 'Chart.yaml')) && !path.endsWith('.tgz')) {
      throw new AppError('invalid_request', `chart ${ref}: no chart there (no Chart.yaml in ${path}): name a chart directory, an oci:// reference with a version, or leave it out for the configured chart (${this.config.AGENT_CHART})`, [
        { path: 'chart', message: 'not a chart' },
      ]);
    }
    return localChart(path, version);
  }

  /** What get_info shows: the chart in effect, and why the bundled one stands in (while it does). */
  inEffect(): ChartInEffect {
    const { ref, version } = this.config.agentChart;
    if (isOci(ref)) {
      const pulled = this.pulled.get(cacheKey(ref, version));
      if (pulled) return { ref, name: pulled.name, version: pulled.chartVersion, dir: pulled.ref, fallback: null };
      if (this.failure) {
        const bundled = this.bundled();
        const retryAfter = new Date(this.failure.atMs + CHART_PULL_RETRY_MS).toISOString();
        return { ref: bundled.source, name: bundled.name, version: bundled.chartVersion, dir: bundled.ref, fallback: { configured: ref, configuredVersion: version ?? null, reason: this.failure.reason, retryAfter } };
      }
      // Not pulled yet: the first write pulls it.
      return { ref, name: null, version: version ?? null, dir: null, fallback: null };
    }
    const chart = isLocal(ref) ? localChart(ref, version) : remoteChart(ref, version);
    return { ref: chart.source, name: chart.name, version: chart.chartVersion, dir: isLocal(ref) ? chart.ref : null, fallback: null };
  }

  private async attemptConfigured(ref: string, version: string | undefined): Promise<ResolvedChart> {
    const failedBefore = this.failure !== undefined;
    try {
      const chart = await this.pull(ref, version);
      this.failure = undefined;
      if (failedBefore) this.logger.log(`AGENT_CHART ${ref} version ${chart.chartVersion} can be pulled again: writes use it from now on instead of the bundled chart`);
      return chart;
    } catch (error) {
      const reason = (error as Error).message;
      this.failure = { atMs: this.clock.nowMs(), reason };
      const bundled = this.bundled();
      this.logger.warn(
        `AGENT_CHART ${ref} version ${version ?? '(none)'} cannot be pulled (${reason}): this write and those of the next ${CHART_PULL_RETRY_MS / 1000} s use the bundled chart ${bundled.name} ${bundled.chartVersion ?? ''} (${bundled.source}) instead; the first write after that tries the registry again`,
      );
      return this.standIn(reason);
    }
  }

  private standIn(reason: string): ResolvedChart {
    return { ...this.bundled(), fallback: reason };
  }

  /** `ref` at `version` from the cache, else pulled into it: one helm pull per (reference, version), shared by callers at the same moment. */
  private pull(ref: string, version: string | undefined): Promise<ResolvedChart> {
    const key = cacheKey(ref, version);
    const known = this.pulled.get(key);
    if (known) return Promise.resolve(known);
    let pulling = this.pulling.get(key);
    if (!pulling) {
      pulling = this.pullInto(key, ref, version).finally(() => this.pulling.delete(key));
      this.pulling.set(key, pulling);
    }
    return pulling;
  }

  private async pullInto(key: string, ref: string, version: string | undefined): Promise<ResolvedChart> {
    const folder = join(this.cacheDir, key);
    let chart = cachedChart(folder, ref);
    if (!chart) {
      await mkdir(this.cacheDir, { recursive: true, mode: 0o700 });
      const partial = await mkdtemp(join(this.cacheDir, `.pull-${key}-`));
      try {
        const result = await this.helm.pull({ ref, version }, partial, { plainHttp: this.config.AGENT_CHART_PLAIN_HTTP });
        if (result.exitCode !== 0) throw new Error(helmMessage(result.stderr) || `helm pull exited with ${result.exitCode}`);
        // Whole or not at all: a folder in the cache is a complete chart (another process may have won the race).
        await rename(partial, folder).catch((error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST' && error.code !== 'ENOTEMPTY') throw error;
        });
      } finally {
        await rm(partial, { recursive: true, force: true });
      }
      chart = cachedChart(folder, ref);
      if (!chart) throw new Error(`helm pull left no chart in ${folder}`);
      this.logger.log(`chart ${ref} version ${chart.chartVersion} pulled into ${folder}: writes that use it read it from there`);
    }
    this.pulled.set(key, chart);
    return chart;
  }

  /** A relative local path as AppConfig.chartRef makes it absolute. */
  private localPath(ref: string): string {
    if (isAbsolute(ref)) return ref;
    const here = resolve(process.cwd(), ref);
    const ours = resolve(PROJECT_ROOT, ref);
    return !existsSync(here) && existsSync(ours) ? ours : here;
  }
}

function isOci(ref: string): boolean {
  return ref.startsWith('oci://');
}

/** As AppConfig.chartRef tells a path: what starts with `.`, `/` or `charts/`. */
function isLocal(ref: string): boolean {
  return ref.startsWith('.') || ref.startsWith('/') || ref.startsWith('charts/');
}

function cacheKey(ref: string, version: string | undefined): string {
  return createHash('sha256').update(`${ref}\n${version ?? ''}`).digest('hex').slice(0, 24);
}

/** The chart a completed pull left in `folder` (helm unpacks it into a folder named as the chart), or null. */
function cachedChart(folder: string, ref: string): ResolvedChart | null {
  let entries: string[];
  try {
    entries = readdirSync(folder);
  } catch {
    return null;
  }
  const dir = entries.map((entry) => join(folder, entry)).find((path) => existsSync(join(path, 'Chart.yaml')));
  if (!dir) return null;
  const meta = chartYaml(dir);
  return { ref: dir, source: ref, name: meta.name ?? lastSegment(ref), chartVersion: meta.version ?? null };
}

/** A chart directory (or .tgz) on this machine; `version` as asked wins over Chart.yaml's, as it always did. */
function localChart(path: string, version?: string): ResolvedChart {
  const meta = chartYaml(path);
  return { ref: path, ...(version !== undefined && { version }), source: path, name: meta.name ?? lastSegment(path), chartVersion: version ?? meta.version ?? null };
}

/** A reference helm fetches itself (repo/name, https://…tgz): named by its last segment. */
function remoteChart(ref: string, version?: string): ResolvedChart {
  return { ref, ...(version !== undefined && { version }), source: ref, name: lastSegment(ref), chartVersion: version ?? null };
}

function chartYaml(dir: string): { name?: string; version?: string } {
  try {
    const meta = parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as { name?: unknown; version?: unknown } | null;
    return { name: typeof meta?.name === 'string' ? meta.name : undefined, version: typeof meta?.version === 'string' ? meta.version : undefined };
  } catch {
    return {};
  }
}

function lastSegment(ref: string): string {
  const last = ref.replace(/\/+$/, '').split('/').pop() ?? '';
  return last.replace(/\.tgz$/, '').replace(/-v?\d+\.\d+\.\d+.*$/, '') || 'unknown';
}

/** A failed pull of a named chart, as the caller is told: what to do, naming the reference. */
function refusal(ref: string, version: string, error: unknown): AppError {
  const message = (error as Error).message;
  const named = `chart ${ref} version ${version}`;
  if (/not found|manifest unknown|name unknown|invalid_reference/i.test(message)) {
    return new AppError('invalid_request', `${named}: the registry has no such chart (${message}): check the reference and the version (helm push it first)`, [{ path: 'version', message: 'not in the registry' }]);
  }
  if (/connection refused|no such host|timeout|timed out|did not finish|dial tcp|EOF|unreachable|server gave HTTP response to HTTPS client/i.test(message)) {
    const hint = /HTTP response to HTTPS/i.test(message) ? ': the registry speaks plain http: set AGENT_CHART_PLAIN_HTTP=true' : ': try again once the registry answers';
    return new AppError('unavailable', `${named} cannot be pulled, the registry cannot be reached (${message})${hint}`, [], 30).fromEnvironment();
  }
  return new AppError('backend_error', `${named} cannot be pulled (${message}): check the reference, the registry's credentials (helm registry login) and AGENT_CHART_PLAIN_HTTP`).fromEnvironment();
}

function user(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}
