import { Controller, Get, HttpCode, Logger, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiExcludeController, DEFAULT_RETRY_AFTER_SECONDS } from '@app/common';
import { ClusterState } from '@app/kube';
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
    const cluster = this.cluster.current();
    const health = await this.store.check();
    if (health.ok) {
      res.status(200).json({ status: 'ready', store: this.store.provider, cluster });
      return;
    }
    // PostgreSQL's driver names the store's host and port: the log has it, the probe does not. The SQLite
    // file's own reason (removed, replaced, not writable) names only the path the operator configured.
    this.logger.warn(`readiness: the store is not usable: ${health.reason}`);
    const reason = this.store.provider === 'sqlite' ? health.reason : `the store is not usable (${this.store.provider}); the service log says why`;
    res.status(503).setHeader('Retry-After', String(DEFAULT_RETRY_AFTER_SECONDS)).json({ status: 'not ready', reason, cluster });
  }
}
