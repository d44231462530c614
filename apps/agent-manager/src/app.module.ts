import { Module, type DynamicModule } from '@nestjs/common';
import { AGENT_OPERATIONS, AgentsModule, CHANGE_OPERATIONS, EVENT_OPERATIONS, MODEL_CONFIG_OPERATIONS, PRESET_OPERATIONS, RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS } from '@app/agents';
import { operationNames, type OperationSet } from '@app/doors';
import { AuthModule } from '@app/auth';
import { BLUEPRINT_OPERATIONS, BlueprintsModule } from '@app/blueprints';
import { AppConfig, Clock, SystemClock } from '@app/common';
import { KubeModule } from '@app/kube';
import { McpModule, McpRegistry } from '@app/mcp';
import { StoreModule } from '@app/store';
import { TelemetryModule } from '@app/telemetry';
import { TRANSFER_OPERATIONS, TransferModule } from '@app/transfer';
import { HealthController } from './health.controller.js';

/** Every operation set the modules declare and serve (their REST controllers, their MCP tools): the policy's names and the routes refused before the body are read from them. */
export const OPERATION_SETS: readonly OperationSet[] = [AGENT_OPERATIONS, RECONCILE_OPERATIONS, ROLLOUT_OPERATIONS, PRESET_OPERATIONS, BLUEPRINT_OPERATIONS, MODEL_CONFIG_OPERATIONS, CHANGE_OPERATIONS, TRANSFER_OPERATIONS, EVENT_OPERATIONS];

/** What AUTHZ_POLICY_FILE may name: every operation each module declares (agents, reconcile, blueprints) and the transport's own tools. */
export const OPERATIONS: readonly string[] = [...operationNames(...OPERATION_SETS), ...McpRegistry.ownTools];

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
