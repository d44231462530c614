import { Allow, ArrayMaxSize, IsArray, IsBoolean, IsInt, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { Optional, WholeNumberText } from '@app/doors';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { BLUEPRINT_NAME, CREATE_ARGUMENTS } from './blueprint.rules.js';

const NAME_MESSAGE = 'must match ^[a-z][a-z0-9_]{0,62}$: a lower-case letter, then up to 62 lower-case letters, digits or "_" (it is the MCP tool\'s name)';
const NAME_SCHEMA = { type: 'string', pattern: BLUEPRINT_NAME.source, maxLength: 63, example: 'incident_helper' } as const;
const MAX_VERSION = 2_147_483_647;
/** The largest page of list_blueprints, and its default. */
export const BLUEPRINT_PAGE = 100;
const STRING_MAP = { type: 'object', additionalProperties: true } as const;

const EXAMPLE_BODY = {
  description: 'Creates an incident helper for a team: a read-only agent that triages incidents with the team runbooks.',
  fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only', 'workflow:incident-triage'], systemMessage: 'You help the on-call engineer triage incidents.' },
  open: ['displayName', 'labels'],
  defaults: { namespace: 'agents', labels: { kind: 'incident-helper' } },
};

/** name: the blueprint's name, which is also its MCP tool's name. */
function BlueprintName(description = "The blueprint's name, also its MCP tool's name"): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    ApiProperty({ description, ...NAME_SCHEMA })(target, key);
    IsString()(target, key);
    Matches(BLUEPRINT_NAME, { message: `${String(key)} ${NAME_MESSAGE}` })(target, key);
  };
}

function Note(): PropertyDecorator {
  return (target: object, key: string | symbol) => {
    ApiPropertyOptional({ description: 'Why this version was written, kept with it', maxLength: 1000, example: 'runbooks moved to the incident-triage workflow' })(target, key);
    Optional()(target, key);
    IsString()(target, key);
    MaxLength(1000)(target, key);
  };
}

export class BlueprintRefDto {
  @BlueprintName()
  name: string;
}

/** A version's body; its rules are the blueprint rules (blueprint.rules.ts), which name every problem at once. */
export class BlueprintBodyDto {
  @ApiProperty({ description: "What the blueprint's agents are for: the description of its MCP tool", maxLength: 2000, example: EXAMPLE_BODY.description })
  @Allow()
  description: string;

  @ApiPropertyOptional({
    description: `Create arguments baked in (any of ${CREATE_ARGUMENTS.join(', ')}), checked by create_agent's rules; never shown by the blueprint's tool`,
    ...STRING_MAP,
    example: EXAMPLE_BODY.fixed,
  })
  @Allow()
  fixed?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'Create arguments the caller of the tool supplies besides name and namespace (always open); never also fixed',
    type: 'array',
    items: { type: 'string', enum: [...CREATE_ARGUMENTS] },
    example: EXAMPLE_BODY.open,
  })
  @Allow()
  open?: string[];

  @ApiPropertyOptional({
    description: "Values of open arguments (and namespace) a caller may leave out: the caller's value wins, objects merge per key, lists replace",
    ...STRING_MAP,
    example: EXAMPLE_BODY.defaults,
  })
  @Allow()
  defaults?: Record<string, unknown>;

  @Note()
  note?: string;
}

export class CreateBlueprintDto extends BlueprintBodyDto {
  @BlueprintName()
  name: string;

  @ApiPropertyOptional({ description: 'Run every check and answer the blueprint as version 1 would be stored; store nothing, serve no tool', default: false })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;
}

/** Example bodies Swagger UI offers: unchanged, they write nothing. */
export const BLUEPRINT_REQUEST_EXAMPLES = {
  create: { name: 'incident_helper', ...EXAMPLE_BODY, dryRun: true },
  upgrade: { dryRun: true },
} as const;

export class SaveBlueprintVersionDto extends BlueprintBodyDto {
  @ApiPropertyOptional({ description: 'Refuse with 409 unless the latest version is still this one', type: 'integer', minimum: 1, maximum: MAX_VERSION, example: 1 })
  @Optional()
  @IsInt({ message: 'expectedVersion must be a whole number: the latestVersion from get_blueprint' })
  @Min(1)
  @Max(MAX_VERSION)
  expectedVersion?: number;
}

/** validate_blueprint: the checks of a create (a new name) or a save-version (an existing name), nothing written. */
export class ValidateBlueprintDto extends BlueprintBodyDto {
  @Allow()
  @ApiProperty({ description: 'The blueprint name: a new one is checked as a create, an existing one as a save-version', ...NAME_SCHEMA })
  name: string;
}

/** list_blueprints: a page by name; the nextCursor of the previous page continues it. */
export class ListBlueprintsQueryDto {
  @ApiPropertyOptional({ description: 'Page size, 1 to 100', type: 'integer', default: BLUEPRINT_PAGE, minimum: 1, maximum: BLUEPRINT_PAGE })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: `limit must be a whole number from 1 to ${BLUEPRINT_PAGE}` })
  @Min(1)
  @Max(BLUEPRINT_PAGE)
  limit?: number;

  @ApiPropertyOptional({ description: 'The nextCursor of the previous page' })
  @Optional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

export class GetBlueprintQueryDto {
  @ApiPropertyOptional({ description: 'A version to read instead of the active one', type: 'integer', minimum: 1, maximum: MAX_VERSION, example: 1 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'version must be a whole number, e.g. 1' })
  @Min(1)
  @Max(MAX_VERSION)
  version?: number;
}

export class BlueprintDiffQueryDto {
  @ApiPropertyOptional({ description: 'The version to diff from; default: the one before `to` (none before version 1: the diff is the whole first body)', type: 'integer', minimum: 1, maximum: MAX_VERSION, example: 1 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'from must be a whole number: a version from list_blueprint_versions, e.g. 1' })
  @Min(1, { message: 'from must be a whole number: a version from list_blueprint_versions, e.g. 1' })
  @Max(MAX_VERSION, { message: 'from is beyond any version a blueprint reaches: pick one from list_blueprint_versions' })
  from?: number;

  @ApiPropertyOptional({ description: 'The version to diff to; default: the active version', type: 'integer', minimum: 1, maximum: MAX_VERSION, example: 2 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'to must be a whole number: a version from list_blueprint_versions, e.g. 2' })
  @Min(1, { message: 'to must be a whole number: a version from list_blueprint_versions, e.g. 2' })
  @Max(MAX_VERSION, { message: 'to is beyond any version a blueprint reaches: pick one from list_blueprint_versions' })
  to?: number;
}

export class RollbackBlueprintDto {
  @ApiProperty({ description: 'The version whose body becomes active again, as a new version', type: 'integer', minimum: 1, maximum: MAX_VERSION, example: 1 })
  @IsInt({ message: 'version must be a whole number: one from list_blueprint_versions' })
  @Min(1)
  @Max(MAX_VERSION)
  version: number;

  @Note()
  note?: string;
}

export class RenameBlueprintDto {
  @BlueprintName('The new name (and MCP tool name)')
  newName: string;
}

export const REFEREE_ACTIONS = ['delete', 'rename'] as const;

export class UpgradeBlueprintAgentsDto {
  @ApiPropertyOptional({ description: 'Answer the values before and after per agent, change nothing', default: false })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;

  @ApiPropertyOptional({
    description: 'Only these holders, as namespace/name (all holders on older versions when left out)',
    type: 'array',
    items: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
    maxItems: 500,
    example: ['agents/payments-helper'],
  })
  @Optional()
  @IsArray()
  @ArrayMaxSize(500)
  @Matches(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { each: true, message: 'agents entries must be namespace/name, e.g. agents/payments-helper' })
  agents?: string[];
}
