import { ArrayMaxSize, IsArray, IsBoolean, IsDefined, IsIn, IsString, Matches } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { Optional } from '@app/doors';

const NAMESPACE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL = /^[^=\s]+=[^=\s]*$/;

/** What export picks: each filter narrows (namespaces: any of them; labels: all of them). */
export class ExportQueryDto {
  @ApiPropertyOptional({ description: 'Only agents in these namespaces (REST: repeat namespace=)', type: [String], example: ['agents'] })
  @Optional()
  @IsArray({ message: 'namespace must be a list of namespace names' })
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Matches(NAMESPACE, { each: true, message: 'namespace must be a namespace name (a DNS label)' })
  namespace?: string[];

  @ApiPropertyOptional({ description: 'Only agents carrying every one of these labels, each key=value (REST: repeat label=)', type: [String], example: ['team=sre'] })
  @Optional()
  @IsArray({ message: 'label must be a list of key=value' })
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @Matches(LABEL, { each: true, message: 'label must be key=value, e.g. team=sre' })
  label?: string[];

  @ApiPropertyOptional({ description: 'Only agents made from this blueprint, and only this blueprint (without it: every blueprint)', example: 'incident_helper' })
  @Optional()
  @IsString()
  @Matches(/^[a-z][a-z0-9_]{0,62}$/, { message: 'blueprint must be a blueprint name' })
  blueprint?: string;

  @ApiPropertyOptional({ description: "Each blueprint's stored versions too, oldest first (for review; an import writes the active body only)", default: false })
  @Optional()
  @IsBoolean({ message: 'blueprintHistory must be true or false' })
  blueprintHistory?: boolean;

  @ApiPropertyOptional({ description: 'REST: the answer as YAML (default) or as its JSON form; also chosen by Accept: application/json', enum: ['yaml', 'json'] })
  @Optional()
  @IsIn(['yaml', 'json'], { message: 'format must be yaml or json' })
  format?: 'yaml' | 'json';
}

export class ExportResultDto {
  @ApiProperty({ description: 'The fleet document, YAML: apiVersion agent-manager.io/v1, kind AgentFleet, selection, blueprints, agents (docs/contract.md §12)' })
  yaml: string;
  @ApiProperty({ type: 'integer', description: 'Agents in the document' }) agents: number;
  @ApiProperty({ type: 'integer', description: 'Blueprints in the document' }) blueprints: number;
}

export class ImportRequestDto {
  @ApiProperty({
    description: 'The fleet document: its YAML text (what export writes) or, over REST with Content-Type: application/json, its JSON form',
    type: 'string',
    example: 'apiVersion: agent-manager.io/v1\nkind: AgentFleet\nselection: {namespaces: [agents]}\nblueprints: []\nagents:\n  - namespace: agents\n    name: incident-helper\n    spec: {modelConfig: default-model-config, toolset: ["preset:read-only"]}\n',
  })
  @IsDefined({ message: 'document is required: the fleet document export wrote' })
  document: unknown;

  @ApiPropertyOptional({ description: 'Answer the plan only; write nothing', default: false })
  @Optional()
  @IsBoolean({ message: 'dryRun must be true or false' })
  dryRun?: boolean;

  @ApiPropertyOptional({ description: "Delete the agents of the document's selection that it does not list (default: the document's own prune, else false)" })
  @Optional()
  @IsBoolean({ message: 'prune must be true or false' })
  prune?: boolean;
}

/** What a spec or blueprint field holds: a text, a list (toolset, open) or a map (fixed, defaults); a label's value is a text. */
const FIELD_VALUE = [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, { type: 'object', additionalProperties: true }];

export class FieldChangeDto {
  @ApiProperty({ example: 'toolset' }) path: string;
  @ApiPropertyOptional({ description: 'Absent: the field was not set', oneOf: FIELD_VALUE }) before?: unknown;
  @ApiPropertyOptional({ description: 'Absent: the field goes away', oneOf: FIELD_VALUE }) after?: unknown;
}

export class ImportErrorDto {
  @ApiProperty({ example: 'precondition_failed' }) code: string;
  @ApiProperty() message: string;
}

export const PLANNED_ACTIONS = ['create', 'update', 'unchanged', 'conflict', 'prune'] as const;
export const ITEM_RESULTS = ['planned', 'created', 'updated', 'pruned', 'unchanged', 'conflict', 'refused', 'failed', 'proposed'] as const;

export class ImportItemDto {
  @ApiProperty({ enum: ['blueprint', 'agent'] }) kind: 'blueprint' | 'agent';
  @ApiPropertyOptional({ description: 'An agent’s namespace' }) namespace?: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: PLANNED_ACTIONS, description: 'What the plan does with it' }) action: (typeof PLANNED_ACTIONS)[number];
  @ApiProperty({
    enum: ITEM_RESULTS,
    description: 'planned (a dry run), created, updated, pruned, unchanged, conflict (not applied), refused (the caller may not write it), failed (error says why), proposed (an approval rule made it a change)',
  })
  result: (typeof ITEM_RESULTS)[number];
  @ApiProperty({ type: [FieldChangeDto], description: 'The spec (or blueprint body) fields that move, before → after' }) changes: FieldChangeDto[];
  @ApiPropertyOptional({ description: 'The journal entry of the write (agents)' }) operationId?: string;
  @ApiPropertyOptional({ description: 'The proposed change, when an approval rule made the write one' }) change?: string;
  @ApiPropertyOptional({ type: 'integer', description: 'The version in the store after the write (or before, when nothing was written)' }) version?: number;
  @ApiPropertyOptional({ description: 'Why a conflict is one' }) reason?: string;
  @ApiPropertyOptional({ type: ImportErrorDto }) error?: ImportErrorDto;
}

export class ImportResultDto {
  @ApiProperty() dryRun: boolean;
  @ApiProperty() prune: boolean;
  @ApiProperty({ description: "The document's digest (sha256 of its canonical JSON): the writes' idempotency keys derive from it" }) digest: string;
  @ApiProperty({ type: [ImportItemDto], description: 'Blueprints first, then agents by namespace and name, then prunes' }) items: ImportItemDto[];
  @ApiProperty({ description: 'How many items have each result', type: 'object', additionalProperties: { type: 'integer' }, example: { unchanged: 7, updated: 3 } })
  summary: Record<string, number>;
}
