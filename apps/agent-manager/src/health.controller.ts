import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Store } from '@app/store';

/** Liveness and readiness for kubelet probes; outside the versioned API. */
@ApiExcludeController()
@Controller()
export class HealthController {
  private draining = false;

  constructor(private readonly store: Store) {}

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
      res.status(503).json({ status: 'draining' });
      return;
    }
    try {
      await this.store.client.$queryRawUnsafe('SELECT 1');
      res.status(200).json({ status: 'ready', store: this.store.provider });
    } catch (error) {
      res.status(503).json({ status: 'not ready', reason: `store unreachable: ${(error as Error).message}` });
    }
  }
}
