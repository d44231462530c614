import { Module } from '@nestjs/common';
import { HelmModule } from '@app/helm';
import { KubeModule } from '@app/kube';
import { AgentsController } from './agents.controller.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentsService } from './agents.service.js';
import { ServiceInfoService } from './service-info.service.js';

@Module({
  imports: [HelmModule, KubeModule],
  controllers: [AgentsController],
  providers: [AgentsService, AgentsRepository, ServiceInfoService],
  exports: [AgentsService, ServiceInfoService],
})
export class AgentsModule {}
