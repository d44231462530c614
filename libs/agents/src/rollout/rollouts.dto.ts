import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsIn, IsInt, IsString, Matches, Max, MaxLength, Min, registerDecorator, type ValidationArguments } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { metadataProblems, Optional, WholeNumberText } from '@app/doors';
import { AgentDto } from '../api/responses.dto.js';
import { ChartValuesDto } from '../api/responses.dto.js';
import { ROLLOUT_STATES } from './rollout.rules.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const BLUEPRINT_NAME = /^[a-z][a-z0-9_]{0,62}$/;

/** Every problem of a rollout selector, each naming its field; empty when it is well formed. */
export function selectorProblems(value: unknown): string[] {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return ['selector must be an object: {namespaces?, labels?, blueprint?, agents?}'];
  const problems: string[] = [];
  const known = ['namespaces', 'labels', 'blueprint', 'agents'];
  for (const key of Object.keys(value)) if (!known.includes(key)) problems.push(`selector.${key} is not a field: use ${known.join(', ')}`);
  const { namespaces, labels, blueprint, agents } = value as Record<string, unknown>;
  const list = (field: string, items: unknown, each: (item: string) => boolean, what: string) => {
    if (items === undefined) return;
    if (!Array.isArray(items) || items.length > 1000) return void problems.push(`selector.${field} must be a list of at most 1000 ${what}`);
    items.forEach((item, at) => typeof item === 'string' && each(item) ? undefined : problems.push(`selector.${field}[${at}] must be ${what}`));
  };
  list('namespaces', namespaces, (ns) => DNS1123_LABEL.test(ns), 'a namespace (a DNS-1123 label)');
  list('agents', agents, (ref) => ref.split('/').length === 2 && ref.split('/').every((part) => DNS1123_LABEL.test(part)), 'an agent as namespace/name');
  if (labels !== undefined) problems.push(...metadataProblems(labels, true).map((problem) => `selector.labels: ${problem}`));
  if (blueprint !== undefined && (typeof blueprint !== 'string' || !BLUEPRINT_NAME.test(blueprint))) problems.push('selector.blueprint must be a blueprint name');
  return problems;
}

function IsRolloutSelector(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isRolloutSelector',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => selectorProblems(value).length === 0,
        defaultMessage: (args?: ValidationArguments) => selectorProblems(args?.value).join('; '),
      },
    });
  };
}

export class RolloutSelectorDto {
  @ApiPropertyOptional({ type: [String], description: 'Only agents in these namespaces', example: ['agents'] }) namespaces?: string[];
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, description: 'Only agents with every one of these labels', example: { team: 'sre' } })
  labels?: Record<string, string>;
  @ApiPropertyOptional({ description: 'Only agents created from this blueprint', example: 'incident_helper' }) blueprint?: string;
  @ApiPropertyOptional({ type: [String], description: 'Only these agents, as namespace/name', example: ['agents/incident-helper'] }) agents?: string[];
}

/** A rollout: which chart, to which agents, in which waves, gated how. */
export class StartRolloutDto {
  @ApiPropertyOptional({ description: 'The chart to move the agents to, as AGENT_CHART takes it (a local path or oci://…); default: the configured chart', example: 'oci://registry.example.com/charts/agent' })
  @Optional()
  @IsString()
  @MaxLength(1000)
  chart?: string;

  @ApiPropertyOptional({ description: "The chart's version (for an OCI or repository reference); default: AGENT_CHART_VERSION for the configured chart", example: '0.6.1' })
  @Optional()
  @IsString()
  @Matches(/^v?\d+\.\d+\.\d+([-+][0-9A-Za-z.+-]*)?$/, { message: 'version must be a semantic version, e.g. 0.6.1' })
  version?: string;

  @ApiPropertyOptional({ type: RolloutSelectorDto, description: 'Which agents: every field narrows; none: every active agent' })
  @Optional()
  @IsRolloutSelector()
  selector?: RolloutSelectorDto;

  @ApiPropertyOptional({ type: [Number], description: 'Wave sizes: a canary, then batches; the last size repeats for the rest', default: [1, 5], example: [1, 5, 6] })
  @Optional()
  @IsArray({ message: 'waves must be a list of wave sizes, e.g. [1, 5]' })
  @ArrayMinSize(1, { message: 'waves needs at least one size' })
  @ArrayMaxSize(100)
  @IsInt({ each: true, message: 'each wave size must be a whole number from 1 to 1000' })
  @Min(1, { each: true, message: 'each wave size must be a whole number from 1 to 1000' })
  @Max(1000, { each: true, message: 'each wave size must be a whole number from 1 to 1000' })
  waves?: number[];

  @ApiPropertyOptional({ type: 'integer', description: "Seconds each wave's agents have to report Accepted and Ready after their upgrade", default: 300, minimum: 1, maximum: 3600 })
  @Optional()
  @IsInt({ message: 'gateTimeoutSeconds must be a whole number of seconds from 1 to 3600' })
  @Min(1, { message: 'gateTimeoutSeconds must be a whole number of seconds from 1 to 3600' })
  @Max(3600, { message: 'gateTimeoutSeconds must be a whole number of seconds from 1 to 3600' })
  gateTimeoutSeconds?: number;

  @ApiPropertyOptional({ type: 'integer', description: 'How many agents may fail in all before the rollout stops (0: the first failure stops it)', default: 0, minimum: 0 })
  @Optional()
  @IsInt({ message: 'failureBudget must be a whole number, 0 or more' })
  @Min(0, { message: 'failureBudget must be a whole number, 0 or more' })
  failureBudget?: number;

  @ApiPropertyOptional({
    description:
      'Answer only once the rollout finished, was paused or cancelled (default: at once, while it moves). Over MCP, each agent settled and each wave is told as a notifications/message while it moves.',
    default: false,
  })
  @Optional()
  @IsBoolean()
  wait?: boolean;

  @ApiPropertyOptional({ description: 'Answer the plan per agent (chart and values from → to, the manifest diff); write nothing', default: false })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;
}

export class RolloutRefDto {
  @ApiProperty({ description: "The rollout's id", example: 'r-3b1f0c9a' })
  @IsString()
  @Matches(/^r-[0-9a-f]{8,32}$/, { message: 'id must be a rollout id as start_fleet_rollout answered it (r-…)' })
  id: string;
}

export class ListRolloutsQueryDto {
  @ApiPropertyOptional({ enum: ROLLOUT_STATES, description: 'Only rollouts in this state' })
  @Optional()
  @IsIn(ROLLOUT_STATES, { message: `state must be one of ${ROLLOUT_STATES.join(', ')}` })
  state?: (typeof ROLLOUT_STATES)[number];

  @ApiPropertyOptional({ type: 'integer', default: 20, minimum: 1, maximum: 100 })
  @Optional()
  @WholeNumberText()
  @IsInt({ message: 'limit must be a whole number from 1 to 100' })
  @Min(1, { message: 'limit must be a whole number from 1 to 100' })
  @Max(100, { message: 'limit must be a whole number from 1 to 100' })
  limit?: number;
}

export class RolloutChartDto {
  @ApiProperty({ example: 'agent' }) name: string;
  @ApiProperty({ nullable: true, type: String, example: '0.6.1' }) version: string | null;
}

export class RolloutAgentDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ type: 'integer', description: 'The wave it moves in (0: the canary)' }) wave: number;
  @ApiProperty({ enum: ['pending', 'upgraded', 'unchanged', 'failed', 'rolledBack', 'skipped'] }) state: string;
  @ApiProperty({ nullable: true, type: String, description: 'Why it failed, was rolled back or skipped' }) reason: string | null;
  @ApiProperty({ type: RolloutChartDto, nullable: true, description: 'The chart it ran when the rollout was planned' }) from: RolloutChartDto | null;
  @ApiProperty({ type: 'integer', description: 'The agent version the rollout planned on (If-Match)' }) plannedVersion: number;
  @ApiProperty({ nullable: true, type: String, description: 'The journal operation of its move or its return' }) operationId: string | null;
}

export class RolloutCountsDto {
  @ApiProperty({ type: 'integer' }) pending: number;
  @ApiProperty({ type: 'integer' }) upgraded: number;
  @ApiProperty({ type: 'integer' }) unchanged: number;
  @ApiProperty({ type: 'integer' }) failed: number;
  @ApiProperty({ type: 'integer' }) rolledBack: number;
  @ApiProperty({ type: 'integer' }) skipped: number;
}

export class RolloutDto {
  @ApiProperty({ example: 'r-3b1f0c9a' }) id: string;
  @ApiProperty({ enum: ROLLOUT_STATES }) state: string;
  @ApiProperty({ description: 'The target chart reference' }) chart: string;
  @ApiProperty({ nullable: true, type: String }) version: string | null;
  @ApiProperty({ type: [Number] }) waves: number[];
  @ApiProperty({ type: 'integer', description: 'The wave running now, or the number of waves once finished' }) wave: number;
  @ApiProperty({ type: 'integer' }) gateTimeoutSeconds: number;
  @ApiProperty({ type: 'integer' }) failureBudget: number;
  @ApiProperty({ type: 'integer', description: 'Agents failed so far' }) failures: number;
  @ApiProperty({ nullable: true, type: String, description: 'Why it stopped, was paused or cancelled' }) message: string | null;
  @ApiProperty({ type: RolloutSelectorDto }) selector: RolloutSelectorDto;
  @ApiProperty({ example: 'alice' }) createdBy: string;
  @ApiProperty() createdAt: string;
  @ApiProperty() updatedAt: string;
  @ApiProperty({ nullable: true, type: String }) finishedAt: string | null;
  @ApiProperty({ type: RolloutCountsDto }) counts: RolloutCountsDto;
  @ApiProperty({ type: [RolloutAgentDto] }) agents: RolloutAgentDto[];
}

export class RolloutListDto {
  @ApiProperty({ type: [RolloutDto], description: 'Newest first, without their agents (get_fleet_rollout has them)' }) items: RolloutDto[];
}

export class FieldMoveDto {
  @ApiProperty({ example: 'toolset' }) field: string;
  @ApiProperty({ nullable: true, type: String, description: 'The value it becomes under the target major (null: none needed)', example: 'toolset' }) to: string | null;
  @ApiProperty({ description: 'What it renders there', example: "the RemoteMCPServer's X-Muster-Toolset header" }) renders: string;
  @ApiPropertyOptional({ description: 'What changed on the way' }) note?: string;
}

export class RolloutPlanItemDto {
  @ApiProperty({ example: 'agents' }) namespace: string;
  @ApiProperty({ example: 'incident-helper' }) name: string;
  @ApiProperty({ type: 'integer' }) wave: number;
  @ApiProperty({ enum: ['upgrade', 'unchanged'] }) action: string;
  @ApiProperty({ type: RolloutChartDto }) from: RolloutChartDto;
  @ApiProperty({ type: RolloutChartDto }) to: RolloutChartDto;
  @ApiProperty({ type: ChartValuesDto }) valuesBefore: ChartValuesDto;
  @ApiProperty({ type: ChartValuesDto }) valuesAfter: ChartValuesDto;
  @ApiProperty({ type: [FieldMoveDto], description: 'To another chart major: where each value goes (empty within a major)' }) fields: FieldMoveDto[];
  @ApiProperty({ type: [String], description: 'Values the target chart major cannot carry, or needs and cannot find, each saying why' }) notCarried: string[];
  @ApiProperty({ description: 'The rendered manifests, unified diff from → to ("" when the same)' }) manifestDiff: string;
  @ApiProperty({ type: AgentDto }) agent: AgentDto;
}

export class RolloutPlanDto {
  @ApiProperty({ enum: [true] }) dryRun: true;
  @ApiProperty() chart: string;
  @ApiProperty({ nullable: true, type: String }) version: string | null;
  @ApiProperty({ type: [Number] }) waves: number[];
  @ApiProperty({ type: [RolloutPlanItemDto] }) items: RolloutPlanItemDto[];
}

/** What start_fleet_rollout answers: the plan of a dry run, or the rollout as stored (as it ended, with wait). */
export class StartRolloutResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty({ type: RolloutPlanDto, nullable: true, description: 'A dry run: the plan per agent; null otherwise' }) plan: RolloutPlanDto | null;
  @ApiProperty({ type: RolloutDto, nullable: true, description: 'The rollout as stored (with wait: as it stopped moving); null for a dry run' }) rollout: RolloutDto | null;
}
