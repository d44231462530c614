import { Module, type DynamicModule } from '@nestjs/common';
import { AGENT_OPERATIONS, AgentsModule, CHANGE_OPERATIONS, EVENT_OPERATIONS, MODEL_CONFIG_OPERATIONS, PRESET_OPERATIONS, RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS } from '@app/agents';
import { operationNames } from '@app/doors';
import { AuthModule } from '@app/auth';
import { BLUEPRINT_OPERATIONS, BlueprintsModule } from '@app/blueprints';
import { AppConfig, Clock, SystemClock } from '@app/common';
import { KubeModule } from '@app/kube';
import { McpModule, McpRegistry } from '@app/mcp';
import { StoreModule } from '@app/store';
import { TelemetryModule } from '@app/telemetry';
import { TRANSFER_OPERATIONS, TransferModule } from '@app/transfer';
import { HealthController } from './health.controller.js';

/** What AUTHZ_POLICY_FILE may name: every operation each module declares (agents, reconcile, blueprints) and the transport's own tools. */
export const OPERATIONS: readonly string[] = [...operationNames(AGENT_OPERATIONS, RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS, PRESET_OPERATIONS, BLUEPRINT_OPERATIONS, MODEL_CONFIG_OPERATIONS, CHANGE_OPERATIONS, TRANSFER_OPERATIONS, EVENT_OPERATIONS), ...McpRegistry.ownTools];

@Module({})
export class AppModule {
  /** `clock`: what leases, idempotency keys and MCP sessions expire by (a test passes one it moves). */
  static forRoot(config: AppConfig, clock: Clock = new SystemClock()): DynamicModule {
    return {
      module: AppModule,
      global: true,
      imports: [TelemetryModule, StoreModule, KubeModule, AuthModule.forRoot({ operations: OPERATIONS }), AgentsModule, BlueprintsModule, TransferModule, McpModule],
      controllers: [HealthController],
      providers: [
        { provide: AppConfig, useValue: config },
        { provide: Clock, useValue: clock },
      ],
      exports: [AppConfig, Clock],
    };
  }
}
