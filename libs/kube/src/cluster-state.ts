import { connect } from 'node:net';
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { IN_CLUSTER, readClusterConfig, type ClusterConfig, type ClusterEnv } from './cluster-config.js';

/** What /readyz and get_info say about the cluster. */
export interface ClusterReport {
  /** not_configured: no usable kubeconfig; unreachable: nothing answers at its server; reachable: a TCP connection opened. */
  state: 'not_configured' | 'unreachable' | 'reachable' | 'unknown';
  /** Where the configuration came from (KUBECONFIG=…, the in-cluster ServiceAccount, ~/.kube/config). */
  source: string;
  server: string | null;
  /** Why it is not usable; null when it is. */
  reason: string | null;
}

/**
 * The report as callers other than admins read it (and unauthenticated /readyz): the state and why
 * in words, where the configuration came from by kind, and no kubeconfig path or API server URL.
 */
export function clusterReportWithoutPaths(report: ClusterReport): ClusterReport {
  return { state: report.state, source: sourceKind(report.source), server: null, reason: report.reason === null ? null : REASONS[report.state] };
}

const REASONS: Record<ClusterReport['state'], string> = {
  not_configured: 'no usable cluster configuration: writes are refused until an operator configures one (the service log and get_info for admins say why)',
  unreachable: "the cluster's API server does not accept connections: writes are refused until it does (the service log and get_info for admins say where)",
  reachable: '',
  unknown: 'not probed yet',
};

/** KUBECONFIG=<paths> as `KUBECONFIG`, the home kubeconfig's path as `~/.kube/config`; the ServiceAccount and `none` as they are. */
function sourceKind(source: string): string {
  if (source.startsWith('KUBECONFIG=')) return 'KUBECONFIG';
  if (source === 'none' || source === IN_CLUSTER) return source;
  return '~/.kube/config';
}

interface Probe {
  at: number;
  reachable: boolean;
  why: string;
}

/** A probe older than this is repeated when asked for (in the background where the caller cannot wait). */
const PROBE_TTL_MS = 10_000;
const PROBE_TIMEOUT_MS = 2_000;

/**
 * The cluster agent-manager writes to, as far as it can tell without a client: whether a
 * kubeconfig is usable, and whether its server accepts connections. A missing or empty
 * configuration never stops the service: reads and dry runs work, writes are refused with
 * `problem()`, and readiness and get_info report it.
 */
@Injectable()
export class ClusterState implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Cluster');
  private config: ClusterConfig | undefined;
  private probe: Probe | undefined;
  private probing: Promise<Probe> | undefined;
  private closed = false;

  constructor(
    private readonly env: ClusterEnv,
    private readonly ownPort?: number,
  ) {}

  /** Checked once the service is up (not on the way to it), so the log says at start why writes will fail. */
  onApplicationBootstrap(): void {
    setImmediate(() => {
      if (!this.closed) this.check();
    });
  }

  /** A close waits for a probe under way (at most its timeout). */
  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    await this.probing;
  }

  private check(): void {
    const config = this.configuration();
    if (!config.configured) {
      this.logger.warn(`${config.problem}. Reads and dry runs work; writes answer backend_error until then`);
      return;
    }
    void this.refresh().then((probe) => {
      if (!probe.reachable) this.logger.warn(`${this.unreachable(config, probe, false)}. Reads and dry runs work; writes answer backend_error until then`);
    });
  }

  configuration(): ClusterConfig {
    this.config ??= readClusterConfig(this.env, this.ownPort);
    return this.config;
  }

  /**
   * Why a helm call against the cluster cannot work now, or undefined: what the helm client checks
   * before it spawns. A cluster last seen unreachable is probed again first.
   */
  async problem(): Promise<string | undefined> {
    const config = this.configuration();
    if (!config.configured) return config.problem;
    // An unreachable cluster is probed again before it refuses anything: one that came back is used at once.
    const probe = this.fresh() && this.probe?.reachable ? this.probe : await this.refresh();
    return probe.reachable ? undefined : this.unreachable(config, probe);
  }

  /** The cluster's state, waiting for a new probe when the last one is stale. */
  async report(): Promise<ClusterReport> {
    const config = this.configuration();
    if (config.configured && !this.fresh()) await this.refresh();
    return this.current();
  }

  /** The cluster's state as last seen, without waiting (a stale probe is repeated in the background): for /readyz. */
  current(): ClusterReport {
    const config = this.configuration();
    if (!config.configured) return { state: 'not_configured', source: config.source, server: null, reason: config.problem };
    if (!this.fresh()) void this.refresh();
    const probe = this.probe;
    if (!probe) return { state: 'unknown', source: config.source, server: config.server, reason: 'not probed yet' };
    return {
      state: probe.reachable ? 'reachable' : 'unreachable',
      source: config.source,
      server: config.server,
      reason: probe.reachable ? null : this.unreachable(config, probe, false),
    };
  }

  private fresh(): boolean {
    return this.probe !== undefined && Date.now() - this.probe.at <= PROBE_TTL_MS;
  }

  private unreachable(config: ClusterConfig & { configured: true }, probe: Probe, refused = true): string {
    const cause = `the cluster is unreachable: ${config.source} points at ${config.server}, which ${probe.why}`;
    return `${cause}${refused ? '; helm was not run' : ''}. Start the cluster, or set KUBECONFIG to the kubeconfig of a reachable one`;
  }

  private refresh(): Promise<Probe> {
    const config = this.configuration();
    if (!config.configured) return Promise.resolve({ at: Date.now(), reachable: false, why: config.problem });
    if (this.closed) return Promise.resolve(this.probe ?? { at: Date.now(), reachable: false, why: 'was not probed: the service is stopping' });
    this.probing ??= tcpProbe(config.server).then((probe) => {
      this.probe = probe;
      this.probing = undefined;
      return probe;
    });
    return this.probing;
  }
}

/** Whether a TCP connection to the server opens: enough to tell "pointing at nothing" from a cluster. */
function tcpProbe(server: string): Promise<Probe> {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    return Promise.resolve({ at: Date.now(), reachable: false, why: 'is not a URL' });
  }
  const port = Number(url.port || (url.protocol === 'http:' ? 80 : 443));
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (reachable: boolean, why: string) => {
      socket.destroy();
      resolve({ at: Date.now(), reachable, why });
    };
    socket.setTimeout(PROBE_TIMEOUT_MS, () => done(false, `did not answer within ${PROBE_TIMEOUT_MS / 1000}s`));
    socket.once('connect', () => done(true, 'accepted a connection'));
    socket.once('error', (error: NodeJS.ErrnoException) => done(false, error.code === 'ECONNREFUSED' ? `refused the connection (${error.message})` : `cannot be reached (${error.message})`));
  });
}
