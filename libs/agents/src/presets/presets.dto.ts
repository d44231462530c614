import { IsObject, IsString, MaxLength } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@app/common';
import { Optional } from '@app/doors';

/** At most this many characters of config.yaml text to validate (Muster's whole config, presets and all). */
export const MAX_CONFIG_TEXT = 1_000_000;

export const PRESETS_EXAMPLE = {
  infrastructure: {
    description: 'Every infrastructure server',
    include: [{ label: 'agent-platform.giantswarm.io/tool-group=infrastructure' }, { readOnly: true }],
    exclude: [{ tool: 'x_mcp-kubernetes_delete' }],
  },
  'team-observability': { description: 'Dashboards and alerts', include: [{ server: 'grafana' }, { preset: 'read-only' }] },
};

/** A proposed `toolsetPresets:` block, as an object or as Muster's whole config.yaml text: exactly one of the two. */
export class ValidateToolsetPresetsDto {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: "Muster's toolsetPresets block as an object: preset name → {description, include: [rules], exclude: [rules]}, each rule one key of tool, pattern, server, workflow, readOnly, preset, label",
    example: PRESETS_EXAMPLE,
  })
  @Optional()
  @IsObject({ message: 'toolsetPresets must be an object: preset name → {description, include, exclude}' })
  toolsetPresets?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: "Muster's config.yaml as text, with toolsetPresets: at its top (the rest of the config is not read); text that is not YAML answers one error",
    maxLength: MAX_CONFIG_TEXT,
    example: 'toolsetPresets:\n  ops:\n    description: Operations\n    include:\n      - server: mcp-kubernetes\n',
  })
  @Optional()
  @IsString({ message: 'config must be the text of a config.yaml' })
  @MaxLength(MAX_CONFIG_TEXT, { message: `config must be at most ${MAX_CONFIG_TEXT} characters` })
  config?: string;
}

export class ToolsetPresetDto {
  @ApiProperty({ example: 'read-only' }) name: string;
  @ApiProperty({ nullable: true, type: String, example: 'Every tool its server annotates read-only, plus every workflow whose step tools are all read-only' }) description: string | null;
  @ApiProperty({
    enum: ['muster', 'platform', 'configured'],
    description: "muster: built into Muster; configured: read from MUSTER_PRESETS; platform: shipped by agent-platform, listed (unchecked) while no presets are read",
    example: 'muster',
  })
  source: string;
}

export class PresetSourceDto {
  @ApiProperty({ description: 'Whether MUSTER_PRESETS is set', example: true }) configured: boolean;
  @ApiProperty({ nullable: true, type: String, description: 'MUSTER_PRESETS (a file by its name only, unless you are an admin)', example: 'configmap:muster/muster#config.yaml' }) location: string | null;
  @ApiProperty({ description: 'Whether presets were read and passed Muster\'s rules: only then are the presets a write names checked', example: true }) loaded: boolean;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: '2026-09-07T10:00:00.000Z' }) loadedAt: string | null;
  @ApiProperty({ type: [String], description: "The last read's errors in Muster's words, when it was refused (the presets read before are kept)", example: [] }) errors: string[];
  @ApiProperty({ nullable: true, type: String, description: 'Why nothing is read now, or null', example: null }) problem: string | null;
}

export class ToolsetPresetListDto {
  @ApiProperty({ type: PresetSourceDto }) source: PresetSourceDto;
  @ApiProperty({ type: [ToolsetPresetDto], description: "Muster's built-ins first, then the configured presets sorted by name: the order Muster lists them in" }) presets: ToolsetPresetDto[];
}

export class ConfiguredPresetDto {
  @ApiProperty({ example: 'team-observability' }) name: string;
  @ApiProperty({ nullable: true, type: String, example: 'Dashboards and alerts' }) description: string | null;
}

export class PresetsValidationDto {
  @ApiProperty({ description: 'True when Muster would start with these presets', example: false }) valid: boolean;
  @ApiProperty({
    type: [String],
    description: "Every error, each in Muster's words (Muster itself stops at the first)",
    example: ['toolsetPresets: preset "ops" include[2] must set exactly one of tool, pattern, server, workflow, readOnly, preset, label'],
  })
  errors: string[];
  @ApiProperty({ type: [ConfiguredPresetDto], description: 'The presets the config defines, sorted by name (built-ins are not listed)' }) presets: ConfiguredPresetDto[];
}
