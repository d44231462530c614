import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { TRANSFER_OPERATIONS } from './transfer.operations.js';

/** export_agents and import_agents as MCP tools, in the admin toolset the reconciler declares. */
@Injectable()
export class TransferTools implements OnModuleInit, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onModuleInit(): void {
    this.doors.contribute(TRANSFER_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(TRANSFER_OPERATIONS);
  }
}
