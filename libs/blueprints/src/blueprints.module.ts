import { Module } from '@nestjs/common';
import { AgentsModule } from '@app/agents';
import { restControllers } from '@app/doors';
import { McpModule } from '@app/mcp';
import { BlueprintCatalog } from './blueprint-catalog.service.js';
import { BlueprintSeeder } from './blueprint-seeder.service.js';
import { BLUEPRINT_OPERATIONS } from './blueprints.operations.js';
import { BlueprintsRepository } from './blueprints.repository.js';
import { BlueprintsService } from './blueprints.service.js';
import { BlueprintsTools } from './blueprints.tools.js';

/** Blueprints (docs/contract.md §9): the REST door, the blueprint-admin tools, and one MCP tool per healthy blueprint. */
@Module({
  imports: [AgentsModule, McpModule],
  controllers: restControllers(BLUEPRINT_OPERATIONS),
  providers: [BlueprintsRepository, BlueprintCatalog, BlueprintSeeder, BlueprintsService, BlueprintsTools],
  exports: [BlueprintsService, BlueprintCatalog],
})
export class BlueprintsModule {}
