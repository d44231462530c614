import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { TRANSFER_OPERATIONS } from './transfer.operations.js';

/**
 * export_agents and import_agents as MCP tools, in the admin toolset the reconciler's operations
 * declare: contributed once every module is initialised, so that toolset is there whatever order
 * Nest initialised the modules in.
 */
@Injectable()
export class TransferTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onApplicationBootstrap(): void {
    this.doors.contribute(TRANSFER_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(TRANSFER_OPERATIONS);
  }
}
