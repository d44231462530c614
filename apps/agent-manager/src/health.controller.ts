import { Controller, Get, HttpCode, Logger, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiExcludeController, DEFAULT_RETRY_AFTER_SECONDS } from '@app/common';
import { ClusterState, clusterReportWithoutPaths } from '@app/kube';
import { Store } from '@app/store';

/** Liveness and readiness for kubelet probes; outside the versioned API. */
@ApiExcludeController()
@Controller()
export class HealthController {
  private draining = false;
  private readonly logger = new Logger('Health');

  constructor(
    private readonly store: Store,
    private readonly cluster: ClusterState,
  ) {}

  /** Readiness goes false first on shutdown, so the load balancer stops sending writes. */
  drain(): void {
    this.draining = true;
  }

  @Get('healthz')
  @HttpCode(200)
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  @Get('readyz')
  async readyz(@Res() res: Response): Promise<void> {
    if (this.draining) {
      res.status(503).setHeader('Retry-After', String(DEFAULT_RETRY_AFTER_SECONDS)).json({ status: 'draining' });
      return;
    }
    // Readiness is the service's own health (its store): without a cluster, reads and dry runs still work,
    // so a missing or unreachable cluster is reported here, not made a reason to stop routing.
    // Unauthenticated: the cluster in words, without the kubeconfig path or the API server URL (get_info shows them to admins).
    const cluster = clusterReportWithoutPaths(this.cluster.current());
    const health = await this.store.check();
    if (health.ok) {
      res.status(200).json({ status: 'ready', store: this.store.provider, cluster });
      return;
    }
    // PostgreSQL's driver names the store's host and port, the SQLite file's reason its path: the log has
    // them, the probe does not (the SQLite reason's words without the path).
    this.logger.warn(`readiness: the store is not usable: ${health.reason}`);
    const reason = this.store.provider === 'sqlite' ? withoutPaths(health.reason) : `the store is not usable (${this.store.provider}); the service log says why`;
    res.status(503).setHeader('Retry-After', String(DEFAULT_RETRY_AFTER_SECONDS)).json({ status: 'not ready', reason, cluster });
  }
}

/** A message with its absolute file paths left out: "the SQLite file /data/store.db was removed" → "the SQLite file was removed". */
function withoutPaths(message: string): string {
  return message.replace(/(^|\s)\/[^\s,;()]+/g, '');
}
