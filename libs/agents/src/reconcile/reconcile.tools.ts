import { Injectable, type OnModuleDestroy, type OnApplicationBootstrap } from '@nestjs/common';
import { McpRegistry, type ToolsetDeclaration, type ToolSpec } from '@app/mcp';
import { parseInput } from '../agents.input.js';
import { AdoptAgentDto, AdoptResultDto, ReconcileRequestDto, ReconcileResultDto } from './reconcile.dto.js';
import { ReconcileDoor } from './reconcile.access.js';

export const ADMIN_TOOLSET: ToolsetDeclaration = {
  name: 'admin',
  title: 'Administration',
  description: 'Bring the store, helm releases and live Agents back into agreement, and adopt releases the store lost. Opt-in: ?toolsets=admin on /mcp.',
  instructions:
    'Call reconcile_agents with dryRun: true first and show the user what it would do; reports (drift, missing) are never acted on. ' +
    'adopt_agent takes a release of the agent chart the store does not know into the store with its helm history.',
  default: false,
  always: false,
};

/** The reconciler's MCP tools, in the opt-in `admin` toolset. */
@Injectable()
export class ReconcileTools implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly reconciler: ReconcileDoor,
    private readonly registry: McpRegistry,
  ) {}

  /** After every module's init, so the admin toolset is listed after the agent toolsets. */
  onApplicationBootstrap(): void {
    this.registry.addToolset(ADMIN_TOOLSET);
    this.registry.addTools(this.list());
  }

  onModuleDestroy(): void {
    this.registry.removeToolset(ADMIN_TOOLSET.name);
  }

  list(): ToolSpec[] {
    return [
      {
        name: 'reconcile_agents',
        title: 'Reconcile agents',
        toolset: 'admin',
        description:
          'Compares the store, the helm release and the live Agent of one agent (namespace and name) or all, and acts by the decision table: records a create helm deployed, uninstalls or re-installs a half-release, rolls back a change helm left pending; drift and missing releases are reported, not overwritten. With dryRun: true it lists what it would do and changes nothing.',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        input: [ReconcileRequestDto],
        output: ReconcileResultDto,
        run: (args) => this.reconciler.reconcile(parseInput(ReconcileRequestDto, args)),
      },
      {
        name: 'adopt_agent',
        title: 'Adopt an agent release',
        toolset: 'admin',
        description:
          'Writes the store only: takes a release of the agent chart that the store does not know (e.g. after the store was lost) into the store as an agent, with its helm history as revisions. With dryRun: true it lists the revisions it would take in.',
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        input: [AdoptAgentDto],
        output: AdoptResultDto,
        run: (args) => this.reconciler.adopt(parseInput(AdoptAgentDto, args)),
      },
    ];
  }
}
