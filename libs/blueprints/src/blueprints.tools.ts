import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { OperationDoors } from '@app/doors';
import { BlueprintCatalog } from './blueprint-catalog.service.js';
import { BlueprintSeeder } from './blueprint-seeder.service.js';
import { BLUEPRINT_OPERATIONS } from './blueprints.operations.js';

/** The blueprint operations as MCP tools (toolset blueprint-admin), and the start of the blueprints' own tools. */
@Injectable()
export class BlueprintsTools implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly doors: OperationDoors,
    private readonly catalog: BlueprintCatalog,
    private readonly seeder: BlueprintSeeder,
  ) {}

  onModuleInit(): void {
    this.doors.contribute(BLUEPRINT_OPERATIONS);
  }

  /** BLUEPRINTS_FILE seeded first, then every healthy blueprint served, then the store followed. */
  async onApplicationBootstrap(): Promise<void> {
    await this.seeder.seed();
    await this.catalog.start();
  }

  onModuleDestroy(): void {
    this.doors.withdraw(BLUEPRINT_OPERATIONS);
  }
}
