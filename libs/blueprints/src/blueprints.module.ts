import { Module } from '@nestjs/common';
import { AgentsModule } from '@app/agents';
import { McpModule } from '@app/mcp';
import { BlueprintCatalog } from './blueprint-catalog.service.js';
import { BlueprintSeeder } from './blueprint-seeder.service.js';
import { BlueprintsController } from './blueprints.controller.js';
import { BlueprintsRepository } from './blueprints.repository.js';
import { BlueprintsService } from './blueprints.service.js';
import { BlueprintsTools } from './blueprints.tools.js';

/** Blueprints (docs/contract.md §9): the REST door, the blueprint-admin tools, and one MCP tool per healthy blueprint. */
@Module({
  imports: [AgentsModule, McpModule],
  controllers: [BlueprintsController],
  providers: [BlueprintsRepository, BlueprintCatalog, BlueprintSeeder, BlueprintsService, BlueprintsTools],
  exports: [BlueprintsService, BlueprintCatalog],
})
export class BlueprintsModule {}
