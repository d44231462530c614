import { AppError, ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse, type ErrorBody } from '@app/common';
import { defineOperation, errorExample, ErrorResponseDto, parseInput, readInput, type OperationInput, type OperationSet } from '@app/doors';
import type { ToolHints, ToolsetDeclaration } from '@app/mcp';
import { BLUEPRINTS_TOOLSET } from './blueprint-catalog.service.js';
import {
  BLUEPRINT_REQUEST_EXAMPLES,
  BlueprintDiffQueryDto,
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
  BlueprintVersionDiffDto,
  BlueprintVersionListDto,
  DeleteBlueprintResultDto,
  UpgradeResultDto,
  ValidateBlueprintResultDto,
} from './blueprints.responses.js';
import { BlueprintsService } from './blueprints.service.js';

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

const NAME = 'incident_helper';
const error = (status: number, description: string, example: ErrorBody) => ApiResponse({ status, description, type: ErrorResponseDto, example });
const invalid = error(400, 'invalid_request: the input is wrong; details name every problem', errorExample('invalid_request', 'fixed.toolset[0]: selector "label:x" …', [{ path: 'fixed.toolset[0]', message: 'label: selectors exist inside presets only' }]));
const notFound = error(404, 'not_found: no such blueprint (or version)', errorExample('not_found', `blueprint ${NAME} does not exist: list_blueprints (GET /api/v1/blueprints) shows what exists`));
const held = error(
  409,
  'conflict: agents created from the blueprint hold it, it is conflicted (delete-only), or another write changed it meanwhile',
  errorExample('conflict', `blueprint ${NAME} cannot be deleted: active agents created from it hold it: agents/payments-helper (version 1); delete those agents first (delete_agent)`, [
    { path: 'agents/payments-helper', message: 'holds version 1' },
  ]),
);
const path = ApiParam({ name: 'name', description: "The blueprint's name (its MCP tool's name)", schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$', example: NAME } });
/** The path of writes without a dry run: its example names no blueprint an example creates, so Execute unchanged changes nothing. */
const writePath = ApiParam({
  name: 'name',
  description: "The blueprint's name (its MCP tool's name); the example names none: put the blueprint's",
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$', example: 'example_blueprint' },
});

/** Blueprints are not namespaced: their operations are granted on the namespace pattern "*". */
const EVERYWHERE = '*';
const blueprint = (name?: string) => ({ namespace: EVERYWHERE, name });

/** The blueprint named in the path (REST) or by the name argument (MCP). */
const nameOf = ({ path }: OperationInput): string => parseInput(BlueprintRefDto, { name: path.name }).name;
/** The blueprint and the rest of the arguments, read by `command`'s rules, both before the policy is asked. */
const nameAnd = <T extends object>(command: new () => T, input: OperationInput): { name: string; command: T } => ({ name: nameOf(input), command: parseInput(command, input.args ?? {}) });
/** The policy's target for what names a blueprint. */
const byName = ({ name }: { name?: string }) => blueprint(name);
/** A body the service reads itself (every violation in one answer): only one that cannot be read at all is refused here. */
function readable<T extends object>(dto: new () => T, raw: unknown): T {
  const { value, violations, unreadable } = readInput(dto, raw);
  if (unreadable) throw AppError.invalid(violations);
  return value;
}
const refOnly = { path: BlueprintRefDto };

/** Every blueprint operation, each declared once for both doors (the blueprint-admin toolset on MCP, /api/v1/blueprints on REST). */
export const BLUEPRINT_OPERATIONS: OperationSet = {
  toolsets: BLUEPRINT_TOOLSETS,
  operations: [
    defineOperation({
      name: 'list_blueprints',
      rest: {
        tag: 'blueprints',
        method: 'get',
        path: 'blueprints',
        args: 'query',
        openapi: [
          ApiOperation({
            operationId: 'listBlueprints',
            summary: 'List blueprints',
            description:
              'The blueprints by name, a page at a time, each with its active version, owner and whether it is conflicted (and why); no fixed value. Pass nextCursor as cursor for the next page. The same as the MCP tool list_blueprints.',
          }),
          ApiQuery({ name: 'limit', required: false, description: 'Page size, 1 to 100', schema: { type: 'integer', minimum: 1, maximum: 100, default: 100 } }),
          ApiQuery({ name: 'cursor', required: false, description: 'The nextCursor of the previous page', schema: { type: 'string' } }),
          ApiResponse({ status: 200, type: BlueprintListDto, description: 'A page of the blueprints by name' }),
          error(
            400,
            'invalid_request: a limit out of range, or a cursor this service did not issue',
            errorExample('invalid_request', 'limit must be a whole number from 1 to 100', [{ path: 'limit', message: 'limit must be a whole number from 1 to 100' }]),
          ),
        ],
      },
      tool: {
        title: 'List blueprints',
        toolset: ADMIN_TOOLSET,
        description:
          "Lists the blueprints by name, a page at a time (limit, up to 100; pass nextCursor as cursor for the next page): each one's description, open arguments, active version, owner (file or operator) and whether it is conflicted and why. Shows no fixed value (get_blueprint does). Writes nothing.",
        annotations: READ,
        output: BlueprintListDto,
      },
      input: { args: ListBlueprintsQueryDto },
      service: BlueprintsService,
      target: { namespace: EVERYWHERE },
      call: (blueprints, query) => blueprints.list(query),
    }),
    defineOperation({
      name: 'get_blueprint',
      rest: {
        tag: 'blueprints',
        method: 'get',
        path: 'blueprints/:name',
        args: 'query',
        openapi: [
          path,
          ApiQuery({ name: 'version', required: false, description: 'A version to read instead of the active one', schema: { type: 'integer', minimum: 1, example: 1 } }),
          ApiOperation({ operationId: 'getBlueprint', summary: 'Read a blueprint and one version, fixed values included', description: 'The active version unless version is given. The same as the MCP tool get_blueprint.' }),
          ApiResponse({ status: 200, type: BlueprintDto, description: 'The blueprint and the version read' }),
          invalid,
          notFound,
        ],
      },
      tool: {
        title: 'Get a blueprint',
        toolset: ADMIN_TOOLSET,
        description: 'Reads one blueprint and one version (the active one unless version is given), fixed values included. Writes nothing.',
        annotations: READ,
        output: BlueprintDto,
      },
      input: { ...refOnly, args: GetBlueprintQueryDto },
      service: BlueprintsService,
      read: (input) => nameAnd(GetBlueprintQueryDto, input),
      target: byName,
      call: (blueprints, { name, command }) => blueprints.get(name, command.version),
    }),
    defineOperation({
      name: 'list_blueprint_versions',
      rest: {
        tag: 'blueprints',
        method: 'get',
        path: 'blueprints/:name/versions',
        openapi: [
          path,
          ApiOperation({ operationId: 'listBlueprintVersions', summary: 'Every version of a blueprint', description: 'Each immutable version: body, note, who and when, which is active. The same as the MCP tool list_blueprint_versions.' }),
          ApiResponse({ status: 200, type: BlueprintVersionListDto, description: 'The versions, oldest first' }),
          invalid,
          notFound,
        ],
      },
      tool: {
        title: 'Blueprint versions',
        toolset: ADMIN_TOOLSET,
        description: 'Reads every version of a blueprint: body, note, who wrote it and when, which is active. Writes nothing.',
        annotations: READ,
        output: BlueprintVersionListDto,
      },
      input: refOnly,
      service: BlueprintsService,
      target: byName,
      call: (blueprints, { name }) => blueprints.versions(name),
    }),
    defineOperation({
      name: 'diff_blueprint_versions',
      rest: {
        tag: 'blueprints',
        method: 'get',
        path: 'blueprints/:name/versions/diff',
        args: 'query',
        openapi: [
          path,
          ApiQuery({ name: 'from', required: false, description: 'The version to diff from; default: the one before to', schema: { type: 'integer', minimum: 1, example: 1 } }),
          ApiQuery({ name: 'to', required: false, description: 'The version to diff to; default: the active version', schema: { type: 'integer', minimum: 1, example: 2 } }),
          ApiOperation({
            operationId: 'diffBlueprintVersions',
            summary: 'What changed between two versions of a blueprint',
            description: 'The body fields that differ (before → after): description, open, and each fixed argument and default by its path. By default the active version against the one before it. The same as the MCP tool diff_blueprint_versions.',
          }),
          ApiResponse({ status: 200, type: BlueprintVersionDiffDto, description: 'The fields that differ' }),
          invalid,
          notFound,
        ],
      },
      tool: {
        title: 'Diff blueprint versions',
        toolset: ADMIN_TOOLSET,
        description:
          'Reads what changed between two versions of a blueprint: the description, the open arguments, and each fixed argument and default that differ (before → after). ' +
          'Without to, the active version; without from, the version before to. Writes nothing.',
        annotations: READ,
        output: BlueprintVersionDiffDto,
      },
      input: { ...refOnly, args: BlueprintDiffQueryDto },
      service: BlueprintsService,
      read: (input) => nameAnd(BlueprintDiffQueryDto, input),
      target: byName,
      call: (blueprints, { name, command }) => blueprints.diffVersions(name, command),
    }),
    defineOperation({
      name: 'create_blueprint',
      rest: {
        tag: 'blueprints',
        method: 'post',
        path: 'blueprints',
        status: 201,
        args: 'body',
        openapi: [
          ApiOperation({
            operationId: 'createBlueprint',
            summary: 'Create a blueprint (version 1) and serve its tool',
            description:
              "Checks the name (grammar, not another tool's, not another blueprint's) and the body (fixed values by create_agent's rules, the fixed/open partition, defaults) and refuses with one 400 naming every problem. The same as the MCP tool create_blueprint.",
          }),
          ApiBody({ type: CreateBlueprintDto, examples: { dryRun: { summary: 'Dry run of the incident_helper blueprint (writes nothing)', value: BLUEPRINT_REQUEST_EXAMPLES.create } } }),
          ApiResponse({ status: 201, type: BlueprintDto, description: 'Created: version 1 is active and its tool is served' }),
          ApiResponse({ status: 200, type: BlueprintDto, description: 'Dry run: the blueprint as version 1 would be stored; nothing was' }),
          invalid,
          error(409, 'conflict: a blueprint of that name exists', errorExample('conflict', `blueprint ${NAME} already exists: save a new version of it (save_blueprint_version) or choose another name`)),
        ],
        reply: (_created, { args }) => ((args as { dryRun?: unknown } | undefined)?.dryRun === true ? { status: 200 } : {}),
      },
      tool: {
        title: 'Create a blueprint',
        toolset: ADMIN_TOOLSET,
        description:
          "Writes: stores version 1 of a new blueprint and serves its tool (named after it) in the blueprints toolset. The fixed arguments are checked by create_agent's rules; every problem is named in one refusal.",
        annotations: WRITE,
        output: BlueprintDto,
      },
      input: { args: CreateBlueprintDto },
      service: BlueprintsService,
      read: ({ args }) => {
        const raw = args ?? {};
        const { name } = readable(CreateBlueprintDto, raw);
        return { raw, name: typeof name === 'string' ? name : undefined };
      },
      target: byName,
      call: (blueprints, { raw }, _command, access) => blueprints.create(access, raw),
    }),
    defineOperation({
      name: 'save_blueprint_version',
      rest: {
        tag: 'blueprints',
        method: 'post',
        path: 'blueprints/:name/versions',
        status: 201,
        args: 'body',
        openapi: [
          writePath,
          ApiOperation({ operationId: 'saveBlueprintVersion', summary: 'Save a new version and make it active', description: 'Checked as a create is; a conflicted blueprint answers 409 (delete-only). The same as the MCP tool save_blueprint_version.' }),
          ApiBody({ type: SaveBlueprintVersionDto }),
          ApiResponse({ status: 201, type: BlueprintDto, description: 'The new version is active and its tool is served' }),
          invalid,
          notFound,
          held,
        ],
      },
      tool: {
        title: 'Save a blueprint version',
        toolset: ADMIN_TOOLSET,
        description: 'Writes: appends a version (a whole body) and makes it active; its tool changes at once. Agents made from older versions keep their values until upgrade_blueprint_agents.',
        annotations: WRITE,
        output: BlueprintDto,
      },
      input: { ...refOnly, args: SaveBlueprintVersionDto },
      service: BlueprintsService,
      read: (input) => {
        const name = nameOf(input);
        const raw = input.args ?? {};
        readable(SaveBlueprintVersionDto, raw);
        return { name, raw };
      },
      target: byName,
      call: (blueprints, { name, raw }, _command, access) => blueprints.save(access, name, raw),
    }),
    defineOperation({
      name: 'rollback_blueprint',
      rest: {
        tag: 'blueprints',
        method: 'post',
        path: 'blueprints/:name/rollback',
        status: 200,
        args: 'body',
        openapi: [
          writePath,
          ApiOperation({ operationId: 'rollbackBlueprint', summary: 'Make an earlier version active again, as a new version', description: 'The earlier body is checked again by the create rules. The same as the MCP tool rollback_blueprint.' }),
          ApiBody({ type: RollbackBlueprintDto }),
          ApiResponse({ status: 200, type: BlueprintDto, description: 'The new version (the earlier body) is active' }),
          invalid,
          notFound,
          held,
        ],
      },
      tool: {
        title: 'Roll back a blueprint',
        toolset: ADMIN_TOOLSET,
        description: 'Writes: makes the body of an earlier version active again, as a new version.',
        annotations: WRITE,
        output: BlueprintDto,
      },
      input: { ...refOnly, args: RollbackBlueprintDto },
      service: BlueprintsService,
      read: (input) => nameAnd(RollbackBlueprintDto, input),
      target: byName,
      call: (blueprints, { name, command }, _command, access) => blueprints.rollback(access, name, command),
    }),
    defineOperation({
      name: 'rename_blueprint',
      rest: {
        tag: 'blueprints',
        method: 'post',
        path: 'blueprints/:name/rename',
        status: 200,
        args: 'body',
        openapi: [
          writePath,
          ApiOperation({ operationId: 'renameBlueprint', summary: 'Rename a blueprint and its tool', description: 'The new tool is bound before the old is removed; refused with 409 while agents hold the blueprint. The same as the MCP tool rename_blueprint.' }),
          ApiBody({ type: RenameBlueprintDto }),
          ApiResponse({ status: 200, type: BlueprintDto, description: 'Renamed' }),
          invalid,
          notFound,
          held,
        ],
      },
      tool: {
        title: 'Rename a blueprint',
        toolset: ADMIN_TOOLSET,
        description: 'Writes: renames a blueprint and its tool (the new one is served before the old is removed). Refused while agents hold it.',
        annotations: DESTRUCTIVE,
        output: BlueprintDto,
      },
      input: { ...refOnly, args: RenameBlueprintDto },
      service: BlueprintsService,
      read: (input) => nameAnd(RenameBlueprintDto, input),
      target: byName,
      call: (blueprints, { name, command }, _command, access) => blueprints.rename(access, name, command),
    }),
    defineOperation({
      name: 'delete_blueprint',
      rest: {
        tag: 'blueprints',
        method: 'delete',
        path: 'blueprints/:name',
        openapi: [
          writePath,
          ApiOperation({
            operationId: 'deleteBlueprint',
            summary: 'Delete a blueprint and stop serving its tool',
            description: 'Refused with 409 listing every holder while agents created from it are active; clears a conflicted blueprint. The same as the MCP tool delete_blueprint.',
          }),
          ApiResponse({ status: 200, type: DeleteBlueprintResultDto, description: 'Deleted with its versions' }),
          invalid,
          notFound,
          held,
        ],
      },
      tool: {
        title: 'Delete a blueprint',
        toolset: ADMIN_TOOLSET,
        description:
          'Writes: deletes a blueprint with its versions and stops serving its tool. Refused while agents created from it are active (the refusal lists them); clears a conflicted blueprint.',
        annotations: DESTRUCTIVE,
        output: DeleteBlueprintResultDto,
      },
      input: refOnly,
      service: BlueprintsService,
      target: byName,
      call: (blueprints, { name }, _command, access) => blueprints.delete(access, name),
      confirm: ({ name }) => `delete_blueprint deletes blueprint ${name} with all its versions and stops serving its tool ${name}.`,
    }),
    defineOperation({
      name: 'validate_blueprint',
      rest: {
        tag: 'blueprints',
        method: 'post',
        path: 'blueprints/validate',
        status: 200,
        args: 'body',
        openapi: [
          ApiOperation({
            operationId: 'validateBlueprint',
            summary: 'Check a blueprint write without writing',
            description:
              'Runs exactly the checks of a create (a new name) or a save-version (an existing name) and answers {valid, violations}; 400 only for a request that cannot be read. The same as the MCP tool validate_blueprint.',
          }),
          ApiBody({ type: ValidateBlueprintDto }),
          ApiResponse({ status: 200, type: ValidateBlueprintResultDto, description: 'The verdict and every violation' }),
          error(400, 'invalid_request: the request could not be read at all', errorExample('invalid_request', 'the request must be a JSON object with the agent fields')),
        ],
      },
      tool: {
        title: 'Validate a blueprint',
        toolset: ADMIN_TOOLSET,
        description: 'Runs the checks of create_blueprint (a new name) or save_blueprint_version (an existing name) and answers valid and every violation without writing.',
        annotations: READ,
        output: ValidateBlueprintResultDto,
      },
      input: { args: ValidateBlueprintDto },
      service: BlueprintsService,
      read: ({ args }) => {
        const { name } = readable(ValidateBlueprintDto, args);
        return { raw: args, name: typeof name === 'string' ? name : '' };
      },
      target: byName,
      call: (blueprints, { raw }) => blueprints.validate(raw),
    }),
    defineOperation({
      name: 'list_blueprint_referees',
      rest: {
        tag: 'blueprints',
        method: 'get',
        path: 'blueprints/:name/referees',
        openapi: [
          path,
          ApiOperation({
            operationId: 'listBlueprintReferees',
            summary: 'The agents that hold a blueprint',
            description:
              'Every active agent created from it (namespace/name, its version): what rename and delete are refused on; holders in namespaces the caller may not read are counted. The same as the MCP tool list_blueprint_referees.',
          }),
          ApiResponse({ status: 200, type: BlueprintRefereesDto, description: 'The holders' }),
          invalid,
          notFound,
        ],
      },
      tool: {
        title: 'Blueprint holders',
        toolset: ADMIN_TOOLSET,
        description:
          'Lists the active agents created from a blueprint (namespace/name and the version each holds): what rename_blueprint and delete_blueprint are refused on. Writes nothing.',
        annotations: READ,
        output: BlueprintRefereesDto,
      },
      input: refOnly,
      service: BlueprintsService,
      target: byName,
      call: (blueprints, { name }, _command, access) => blueprints.referees(access, name),
    }),
    defineOperation({
      name: 'upgrade_blueprint_agents',
      rest: {
        tag: 'blueprints',
        method: 'post',
        path: 'blueprints/:name/upgrade',
        status: 200,
        args: 'body',
        openapi: [
          writePath,
          ApiOperation({
            operationId: 'upgradeBlueprintAgents',
            summary: 'Move holders on older versions to the active version',
            description:
              'Each agent through update_agent (its own journal entry, If-Match on the version read), continuing past failures; answers per agent updated, unchanged or failed with the reason. dryRun answers the values before and after. The same as the MCP tool upgrade_blueprint_agents.',
          }),
          ApiBody({ type: UpgradeBlueprintAgentsDto, examples: { dryRun: { summary: "Dry run: every holder's values before and after (changes nothing)", value: BLUEPRINT_REQUEST_EXAMPLES.upgrade } } }),
          ApiResponse({ status: 200, type: UpgradeResultDto, description: 'Per agent: what was (or would be) done' }),
          invalid,
          notFound,
          held,
        ],
      },
      tool: {
        title: 'Upgrade agents to a blueprint version',
        toolset: ADMIN_TOOLSET,
        description:
          "Writes: moves agents made from older versions of a blueprint to its active version, each through update_agent (its own journal entry), continuing past failures; answers per agent updated, unchanged or failed. dryRun: true answers each agent's values before and after.",
        annotations: { ...DESTRUCTIVE, openWorldHint: true },
        output: UpgradeResultDto,
      },
      input: { ...refOnly, args: UpgradeBlueprintAgentsDto },
      service: BlueprintsService,
      read: (input) => nameAnd(UpgradeBlueprintAgentsDto, input),
      target: byName,
      call: (blueprints, { name, command }, _command, access) => blueprints.upgrade(access, name, command),
      confirm: ({ name }) => `upgrade_blueprint_agents upgrades with helm every agent made from an older version of blueprint ${name} to its active version, each as an update_agent.`,
    }),
  ],
};
