import { Injectable, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { AgentAccess, AgentsRepository, parseInput, recorded } from '@app/agents';
import { Authorizer } from '@app/auth';
import { McpRegistry, type ToolHints, type ToolsetDeclaration, type ToolSpec } from '@app/mcp';
import { BlueprintCatalog, BLUEPRINTS_TOOLSET } from './blueprint-catalog.service.js';
import { BlueprintSeeder } from './blueprint-seeder.service.js';
import {
  BlueprintRefDto,
  CreateBlueprintDto,
  GetBlueprintQueryDto,
  ListBlueprintsQueryDto,
  RenameBlueprintDto,
  RollbackBlueprintDto,
  SaveBlueprintVersionDto,
  UpgradeBlueprintAgentsDto,
  ValidateBlueprintDto,
} from './blueprints.dto.js';
import {
  BlueprintDto,
  BlueprintListDto,
  BlueprintRefereesDto,
  BlueprintVersionListDto,
  DeleteBlueprintResultDto,
  UpgradeResultDto,
  ValidateBlueprintResultDto,
} from './blueprints.responses.js';
import { BLUEPRINT_OPERATIONS, BlueprintsService } from './blueprints.service.js';

const READ: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const WRITE: ToolHints = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };
const DESTRUCTIVE: ToolHints = { ...WRITE, destructiveHint: true };

const ADMIN_TOOLSET = 'blueprint-admin';

export const BLUEPRINT_TOOLSETS: readonly ToolsetDeclaration[] = [
  {
    name: BLUEPRINTS_TOOLSET,
    title: 'Blueprints',
    description: 'One tool per blueprint: each creates an agent from a reviewed, versioned bundle of settings, taking only the arguments that vary (name, namespace and what the blueprint leaves open).',
    instructions:
      "Each tool in this toolset is a blueprint: it creates an agent with settings an admin fixed, and takes only name, namespace and the blueprint's open arguments. " +
      'Call it with dryRun: true first and show the user what it would create. A blueprint is not a Muster preset (a toolset selector such as preset:read-only).',
    default: true,
    always: false,
  },
  {
    name: ADMIN_TOOLSET,
    title: 'Blueprint administration',
    description: 'Create, version, roll back, rename and delete blueprints, see which agents hold them and upgrade those agents. Opt-in: ?toolsets=blueprint-admin on /mcp.',
    instructions:
      'validate_blueprint before create_blueprint or save_blueprint_version: it answers every violation without writing. ' +
      'list_blueprint_referees before rename_blueprint or delete_blueprint: both are refused while agents hold the blueprint. ' +
      'After a save, upgrade_blueprint_agents with dryRun: true shows each holder before and after.',
    default: false,
    always: false,
  },
];

/** The name argument and the rest, for tools whose REST twin takes the name in the path. */
function split<T extends object>(args: Record<string, unknown>, command: new () => T): [string, T] {
  const { name, ...rest } = args;
  return [parseInput(BlueprintRefDto, { name }).name, parseInput(command, rest)];
}

/** The blueprint operations as MCP tools (toolset blueprint-admin), and the start of the blueprints' own tools. */
@Injectable()
export class BlueprintsTools implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  static readonly operations: readonly string[] = BLUEPRINT_OPERATIONS;
  private readonly access: AgentAccess;

  constructor(
    private readonly blueprints: BlueprintsService,
    private readonly catalog: BlueprintCatalog,
    private readonly seeder: BlueprintSeeder,
    private readonly registry: McpRegistry,
    authorizer: Authorizer,
    repository: AgentsRepository,
  ) {
    this.access = new AgentAccess(authorizer, repository);
  }

  onModuleInit(): void {
    for (const toolset of BLUEPRINT_TOOLSETS) this.registry.addToolset(toolset);
    this.registry.addTools(this.list().map((spec) => recorded(spec, this.access)));
  }

  /** BLUEPRINTS_FILE seeded first, then every healthy blueprint served, then the store followed. */
  async onApplicationBootstrap(): Promise<void> {
    await this.seeder.seed();
    await this.catalog.start();
  }

  onModuleDestroy(): void {
    for (const toolset of BLUEPRINT_TOOLSETS) this.registry.removeToolset(toolset.name);
  }

  list(): ToolSpec[] {
    const tool = (name: string, title: string, description: string, annotations: ToolHints, input: ToolSpec['input'], output: ToolSpec['output'], run: ToolSpec['run']): ToolSpec => ({
      name, title, toolset: ADMIN_TOOLSET, description, annotations, input, output, run,
    });
    return [
      tool(
        'list_blueprints',
        'List blueprints',
        'Lists the blueprints by name, a page at a time (limit, up to 100; pass nextCursor as cursor for the next page): each one\'s description, open arguments, active version, owner (file or operator) and whether it is conflicted and why. Shows no fixed value (get_blueprint does). Writes nothing.',
        READ,
        [ListBlueprintsQueryDto],
        BlueprintListDto,
        (args) => this.blueprints.list(parseInput(ListBlueprintsQueryDto, args)),
      ),
      tool('get_blueprint', 'Get a blueprint', 'Reads one blueprint and one version (the active one unless version is given), fixed values included. Writes nothing.', READ, [BlueprintRefDto, GetBlueprintQueryDto], BlueprintDto, (args) => {
        const [name, query] = split(args, GetBlueprintQueryDto);
        return this.blueprints.get(name, query.version);
      }),
      tool('list_blueprint_versions', 'Blueprint versions', 'Reads every version of a blueprint: body, note, who wrote it and when, which is active. Writes nothing.', READ, [BlueprintRefDto], BlueprintVersionListDto, (args) =>
        this.blueprints.versions(parseInput(BlueprintRefDto, args).name),
      ),
      tool('create_blueprint', 'Create a blueprint', "Writes: stores version 1 of a new blueprint and serves its tool (named after it) in the blueprints toolset. The fixed arguments are checked by create_agent's rules; every problem is named in one refusal.", WRITE, [CreateBlueprintDto], BlueprintDto, (args) =>
        this.blueprints.create(args),
      ),
      tool('save_blueprint_version', 'Save a blueprint version', 'Writes: appends a version (a whole body) and makes it active; its tool changes at once. Agents made from older versions keep their values until upgrade_blueprint_agents.', WRITE, [BlueprintRefDto, SaveBlueprintVersionDto], BlueprintDto, (args) => {
        const { name, ...body } = args;
        return this.blueprints.save(parseInput(BlueprintRefDto, { name }).name, body);
      }),
      tool('rollback_blueprint', 'Roll back a blueprint', 'Writes: makes the body of an earlier version active again, as a new version.', WRITE, [BlueprintRefDto, RollbackBlueprintDto], BlueprintDto, (args) =>
        this.blueprints.rollback(...split(args, RollbackBlueprintDto)),
      ),
      tool('rename_blueprint', 'Rename a blueprint', 'Writes: renames a blueprint and its tool (the new one is served before the old is removed). Refused while agents hold it.', DESTRUCTIVE, [BlueprintRefDto, RenameBlueprintDto], BlueprintDto, (args) =>
        this.blueprints.rename(...split(args, RenameBlueprintDto)),
      ),
      tool('delete_blueprint', 'Delete a blueprint', 'Writes: deletes a blueprint with its versions and stops serving its tool. Refused while agents created from it are active (the refusal lists them); clears a conflicted blueprint.', DESTRUCTIVE, [BlueprintRefDto], DeleteBlueprintResultDto, (args) =>
        this.blueprints.delete(parseInput(BlueprintRefDto, args).name),
      ),
      tool('validate_blueprint', 'Validate a blueprint', 'Runs the checks of create_blueprint (a new name) or save_blueprint_version (an existing name) and answers valid and every violation without writing.', READ, [ValidateBlueprintDto], ValidateBlueprintResultDto, (args) =>
        this.blueprints.validate(args),
      ),
      tool('list_blueprint_referees', 'Blueprint holders', 'Lists the active agents created from a blueprint (namespace/name and the version each holds): what rename_blueprint and delete_blueprint are refused on. Writes nothing.', READ, [BlueprintRefDto], BlueprintRefereesDto, (args) =>
        this.blueprints.referees(parseInput(BlueprintRefDto, args).name),
      ),
      tool(
        'upgrade_blueprint_agents',
        'Upgrade agents to a blueprint version',
        "Writes: moves agents made from older versions of a blueprint to its active version, each through update_agent (its own journal entry), continuing past failures; answers per agent updated, unchanged or failed. dryRun: true answers each agent's values before and after.",
        { ...DESTRUCTIVE, openWorldHint: true },
        [BlueprintRefDto, UpgradeBlueprintAgentsDto],
        UpgradeResultDto,
        (args) => this.blueprints.upgrade(...split(args, UpgradeBlueprintAgentsDto)),
      ),
    ];
  }
}
