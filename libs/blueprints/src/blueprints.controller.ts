import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res, UseInterceptors } from '@nestjs/common';
import type { Response } from 'express';
import { errorExample, ErrorResponseDto, parseInput, RestContextInterceptor, RestRedactionInterceptor } from '@app/agents';
import { ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags, type ErrorBody } from '@app/common';
import {
  BLUEPRINT_REQUEST_EXAMPLES,
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
import { BlueprintsService } from './blueprints.service.js';

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

function ref(params: Record<string, string>): string {
  return parseInput(BlueprintRefDto, { name: params.name }).name;
}

/** Blueprints on REST; the same service methods as the MCP tools of the blueprint-admin toolset. */
@ApiTags('blueprints')
@Controller('api/v1/blueprints')
@UseInterceptors(RestContextInterceptor, RestRedactionInterceptor)
export class BlueprintsController {
  constructor(private readonly blueprints: BlueprintsService) {}

  @Get()
  @ApiOperation({
    operationId: 'listBlueprints',
    summary: 'List blueprints',
    description: 'The blueprints by name, a page at a time, each with its active version, owner and whether it is conflicted (and why); no fixed value. Pass nextCursor as cursor for the next page. The same as the MCP tool list_blueprints.',
  })
  @ApiQuery({ name: 'limit', required: false, description: 'Page size, 1 to 100', schema: { type: 'integer', minimum: 1, maximum: 100, default: 100 } })
  @ApiQuery({ name: 'cursor', required: false, description: 'The nextCursor of the previous page', schema: { type: 'string' } })
  @ApiResponse({ status: 200, type: BlueprintListDto, description: 'A page of the blueprints by name' })
  @(error(400, 'invalid_request: a limit out of range, or a cursor this service did not issue', errorExample('invalid_request', 'limit must be a whole number from 1 to 100', [{ path: 'limit', message: 'limit must be a whole number from 1 to 100' }])))
  list(@Query() query: Record<string, unknown>): Promise<BlueprintListDto> {
    return this.blueprints.list(parseInput(ListBlueprintsQueryDto, query ?? {}));
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    operationId: 'createBlueprint',
    summary: 'Create a blueprint (version 1) and serve its tool',
    description: "Checks the name (grammar, not another tool's, not another blueprint's) and the body (fixed values by create_agent's rules, the fixed/open partition, defaults) and refuses with one 400 naming every problem. The same as the MCP tool create_blueprint.",
  })
  @ApiBody({ type: CreateBlueprintDto, examples: { dryRun: { summary: 'Dry run of the incident_helper blueprint (writes nothing)', value: BLUEPRINT_REQUEST_EXAMPLES.create } } })
  @ApiResponse({ status: 201, type: BlueprintDto, description: 'Created: version 1 is active and its tool is served' })
  @ApiResponse({ status: 200, type: BlueprintDto, description: 'Dry run: the blueprint as version 1 would be stored; nothing was' })
  @invalid
  @(error(409, 'conflict: a blueprint of that name exists', errorExample('conflict', `blueprint ${NAME} already exists: save a new version of it (save_blueprint_version) or choose another name`)))
  async create(@Body() body: unknown, @Res({ passthrough: true }) res: Response): Promise<BlueprintDto> {
    const created = await this.blueprints.create(body ?? {});
    if ((body as { dryRun?: unknown } | undefined)?.dryRun === true) res.status(200);
    return created;
  }

  @Post('validate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'validateBlueprint',
    summary: 'Check a blueprint write without writing',
    description: 'Runs exactly the checks of a create (a new name) or a save-version (an existing name) and answers {valid, violations}; 400 only for a request that cannot be read. The same as the MCP tool validate_blueprint.',
  })
  @ApiBody({ type: ValidateBlueprintDto })
  @ApiResponse({ status: 200, type: ValidateBlueprintResultDto, description: 'The verdict and every violation' })
  @(error(400, 'invalid_request: the request could not be read at all', errorExample('invalid_request', 'the request must be a JSON object with the agent fields')))
  validate(@Body() body: unknown): Promise<ValidateBlueprintResultDto> {
    return this.blueprints.validate(body);
  }

  @Get(':name')
  @path
  @ApiQuery({ name: 'version', required: false, description: 'A version to read instead of the active one', schema: { type: 'integer', minimum: 1, example: 1 } })
  @ApiOperation({ operationId: 'getBlueprint', summary: 'Read a blueprint and one version, fixed values included', description: 'The active version unless version is given. The same as the MCP tool get_blueprint.' })
  @ApiResponse({ status: 200, type: BlueprintDto, description: 'The blueprint and the version read' })
  @invalid
  @notFound
  get(@Param() params: Record<string, string>, @Query() query: Record<string, unknown>): Promise<BlueprintDto> {
    const name = ref(params);
    return this.blueprints.get(name, parseInput(GetBlueprintQueryDto, query ?? {}).version);
  }

  @Get(':name/versions')
  @path
  @ApiOperation({ operationId: 'listBlueprintVersions', summary: 'Every version of a blueprint', description: 'Each immutable version: body, note, who and when, which is active. The same as the MCP tool list_blueprint_versions.' })
  @ApiResponse({ status: 200, type: BlueprintVersionListDto, description: 'The versions, oldest first' })
  @invalid
  @notFound
  versions(@Param() params: Record<string, string>): Promise<BlueprintVersionListDto> {
    return this.blueprints.versions(ref(params));
  }

  @Post(':name/versions')
  @HttpCode(201)
  @writePath
  @ApiOperation({ operationId: 'saveBlueprintVersion', summary: 'Save a new version and make it active', description: 'Checked as a create is; a conflicted blueprint answers 409 (delete-only). The same as the MCP tool save_blueprint_version.' })
  @ApiBody({ type: SaveBlueprintVersionDto })
  @ApiResponse({ status: 201, type: BlueprintDto, description: 'The new version is active and its tool is served' })
  @invalid
  @notFound
  @held
  save(@Param() params: Record<string, string>, @Body() body: unknown): Promise<BlueprintDto> {
    return this.blueprints.save(ref(params), body ?? {});
  }

  @Post(':name/rollback')
  @HttpCode(200)
  @writePath
  @ApiOperation({ operationId: 'rollbackBlueprint', summary: 'Make an earlier version active again, as a new version', description: 'The earlier body is checked again by the create rules. The same as the MCP tool rollback_blueprint.' })
  @ApiBody({ type: RollbackBlueprintDto })
  @ApiResponse({ status: 200, type: BlueprintDto, description: 'The new version (the earlier body) is active' })
  @invalid
  @notFound
  @held
  rollback(@Param() params: Record<string, string>, @Body() body: unknown): Promise<BlueprintDto> {
    return this.blueprints.rollback(ref(params), parseInput(RollbackBlueprintDto, body ?? {}));
  }

  @Post(':name/rename')
  @HttpCode(200)
  @writePath
  @ApiOperation({ operationId: 'renameBlueprint', summary: 'Rename a blueprint and its tool', description: 'The new tool is bound before the old is removed; refused with 409 while agents hold the blueprint. The same as the MCP tool rename_blueprint.' })
  @ApiBody({ type: RenameBlueprintDto })
  @ApiResponse({ status: 200, type: BlueprintDto, description: 'Renamed' })
  @invalid
  @notFound
  @held
  rename(@Param() params: Record<string, string>, @Body() body: unknown): Promise<BlueprintDto> {
    return this.blueprints.rename(ref(params), parseInput(RenameBlueprintDto, body ?? {}));
  }

  @Delete(':name')
  @writePath
  @ApiOperation({ operationId: 'deleteBlueprint', summary: 'Delete a blueprint and stop serving its tool', description: 'Refused with 409 listing every holder while agents created from it are active; clears a conflicted blueprint. The same as the MCP tool delete_blueprint.' })
  @ApiResponse({ status: 200, type: DeleteBlueprintResultDto, description: 'Deleted with its versions' })
  @invalid
  @notFound
  @held
  delete(@Param() params: Record<string, string>): Promise<DeleteBlueprintResultDto> {
    return this.blueprints.delete(ref(params));
  }

  @Get(':name/referees')
  @path
  @ApiOperation({
    operationId: 'listBlueprintReferees',
    summary: 'The agents that hold a blueprint',
    description: 'Every active agent created from it (namespace/name, its version): what rename and delete are refused on; holders in namespaces the caller may not read are counted. The same as the MCP tool list_blueprint_referees.',
  })
  @ApiResponse({ status: 200, type: BlueprintRefereesDto, description: 'The holders' })
  @invalid
  @notFound
  referees(@Param() params: Record<string, string>): Promise<BlueprintRefereesDto> {
    return this.blueprints.referees(ref(params));
  }

  @Post(':name/upgrade')
  @HttpCode(200)
  @writePath
  @ApiOperation({
    operationId: 'upgradeBlueprintAgents',
    summary: 'Move holders on older versions to the active version',
    description:
      'Each agent through update_agent (its own journal entry, If-Match on the version read), continuing past failures; answers per agent updated, unchanged or failed with the reason. dryRun answers the values before and after. The same as the MCP tool upgrade_blueprint_agents.',
  })
  @ApiBody({ type: UpgradeBlueprintAgentsDto, examples: { dryRun: { summary: "Dry run: every holder's values before and after (changes nothing)", value: BLUEPRINT_REQUEST_EXAMPLES.upgrade } } })
  @ApiResponse({ status: 200, type: UpgradeResultDto, description: 'Per agent: what was (or would be) done' })
  @invalid
  @notFound
  @held
  upgrade(@Param() params: Record<string, string>, @Body() body: unknown): Promise<UpgradeResultDto> {
    return this.blueprints.upgrade(ref(params), parseInput(UpgradeBlueprintAgentsDto, body ?? {}));
  }
}
