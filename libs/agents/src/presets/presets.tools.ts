import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { PRESET_OPERATIONS } from './presets.operations.js';

/** The preset operations' MCP tools, in the `agents` toolset (declared by AgentsTools when the module starts). */
@Injectable()
export class PresetTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(private readonly doors: OperationDoors) {}

  onApplicationBootstrap(): void {
    this.doors.contribute(PRESET_OPERATIONS);
  }

  onModuleDestroy(): void {
    this.doors.withdraw(PRESET_OPERATIONS);
  }
}
