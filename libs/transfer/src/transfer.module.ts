import { Module } from '@nestjs/common';
import { AgentsModule } from '@app/agents';
import { BlueprintsModule } from '@app/blueprints';
import { restControllers } from '@app/doors';
import { TRANSFER_OPERATIONS } from './transfer.operations.js';
import { TransferService } from './transfer.service.js';
import { TransferTools } from './transfer.tools.js';

/** Agents as code (docs/contract.md §12): export and import of fleet documents, on both doors and the CLI. */
@Module({
  imports: [AgentsModule, BlueprintsModule],
  controllers: restControllers(TRANSFER_OPERATIONS),
  providers: [TransferService, TransferTools],
  exports: [TransferService],
})
export class TransferModule {}
