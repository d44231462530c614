import { Module } from '@nestjs/common';
import { HelmModule } from '@app/helm';
import { KubeModule } from '@app/kube';
import { McpModule } from '@app/mcp';
import { AgentsController } from './agents.controller.js';
import { AgentLeaseRepository } from './agent-lease.repository.js';
import { AgentWrites } from './agent-writes.service.js';
import { AgentsRepository } from './agents.repository.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { OperationRecovery } from './operation-recovery.service.js';
import { AgentsService } from './agents.service.js';
import { AgentsTools } from './agents.tools.js';
import { ServiceInfoService } from './service-info.service.js';
import { WritePipeline } from './writes/write-pipeline.js';

@Module({
  imports: [HelmModule, KubeModule, McpModule],
  controllers: [AgentsController],
  providers: [AgentsService, AgentsRepository, ServiceInfoService, AgentLeaseRepository, IdempotencyRepository, AgentWrites, OperationRecovery, WritePipeline, AgentsTools],
  exports: [AgentsService, ServiceInfoService, AgentWrites],
})
export class AgentsModule {}
