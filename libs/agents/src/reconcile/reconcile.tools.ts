import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { RECONCILE_OPERATIONS } from './reconcile.operations.js';

/** The reconciler's MCP tools, in the opt-in `admin` toolset. */
@Injectable()
export class ReconcileTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  /** After every module's init, so the admin toolset is listed after the agent and blueprint toolsets. */
  onApplicationBootstrap(): void {
    this.doors.contribute(RECONCILE_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(RECONCILE_OPERATIONS);
  }
}
