import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { MODEL_CONFIG_OPERATIONS } from './model-configs.operations.js';

/** list_model_configs's MCP tool, in the agents toolset: contributed once every module's init added its toolsets. */
@Injectable()
export class ModelConfigsTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onApplicationBootstrap(): void {
    this.doors.contribute(MODEL_CONFIG_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(MODEL_CONFIG_OPERATIONS);
  }
}
