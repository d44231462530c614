import { Module, type DynamicModule } from '@nestjs/common';
import { AgentsModule } from '@app/agents';
import { AppConfig } from '@app/common';
import { KubeModule } from '@app/kube';
import { McpModule } from '@app/mcp';
import { StoreModule } from '@app/store';
import { HealthController } from './health.controller.js';

@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [StoreModule, KubeModule, AgentsModule, McpModule],
      controllers: [HealthController],
      providers: [{ provide: AppConfig, useValue: config }],
      exports: [AppConfig],
    };
  }
}
