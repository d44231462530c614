import { ApiBody, ApiOperation, ApiResponse } from '@app/common';
import type { ToolHints } from '@app/mcp';
import { defineOperation, errorExample, type OperationSet } from '@app/doors';
import { error, EXAMPLES } from '../api/agents.openapi.js';
import { PresetsValidationDto, PRESETS_EXAMPLE, ToolsetPresetListDto, ValidateToolsetPresetsDto } from './presets.dto.js';
import { PresetSource } from './preset-source.js';

/** Both read what this process holds (or only their input): nothing is written, nothing outside is called. */
const READ_ONLY: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

/**
 * Muster's presets, each operation declared once for both doors: the presets a toolset may name
 * (Muster's built-ins and those MUSTER_PRESETS holds), and a proposed `toolsetPresets:` checked by
 * Muster's start-up rules before it is rolled out to Muster. Their tools are in the `agents` toolset.
 */
export const PRESET_OPERATIONS: OperationSet = {
  toolsets: [],
  operations: [
    defineOperation({
      name: 'list_toolset_presets',
      rest: {
        tag: 'toolset-presets',
        method: 'get',
        path: 'toolset-presets',
        openapi: [
          ApiOperation({
            operationId: 'listToolsetPresets',
            summary: 'The presets a toolset may name: Muster\'s built-ins and the installation\'s',
            description:
              "Muster's built-in presets (read-only, none, full) and the ones MUSTER_PRESETS holds (Muster's config.yaml or ConfigMap), with their descriptions and where the list comes from. While no presets are read, agent-platform's presets are listed as platform and preset names are not checked. The same as the MCP tool list_toolset_presets.",
          }),
          ApiResponse({ status: 200, description: 'The known presets and their source', type: ToolsetPresetListDto }),
          error(400, 'invalid_request: the X-Actor header cannot name anyone', EXAMPLES.invalidActor),
        ],
      },
      tool: {
        title: 'List toolset presets',
        toolset: 'agents',
        description:
          "Lists the presets an agent's toolset may name as preset:<name>: Muster's built-ins (read-only, none, full) and this installation's (from Muster's config), each with its description, and whether the installation's presets are read (only then does a write naming an unknown preset get refused). Writes nothing.",
        annotations: READ_ONLY,
        output: ToolsetPresetListDto,
      },
      input: {},
      service: PresetSource,
      call: async (presets, _read, _command, access) => presets.list({ paths: access.isAdmin() }),
    }),
    defineOperation({
      name: 'validate_toolset_presets',
      rest: {
        tag: 'toolset-presets',
        method: 'post',
        path: 'toolset-presets/validate',
        status: 200,
        args: 'body',
        openapi: [
          ApiOperation({
            operationId: 'validateToolsetPresets',
            summary: "Check proposed toolsetPresets by Muster's start-up rules, every error at once",
            description:
              "Checks a toolsetPresets block (as an object, or as Muster's config.yaml text) by the rules muster serve checks when it starts, and answers every error at once in Muster's words, where Muster stops at the first and refuses to start. Text that is not YAML is one error in the answer. Reads and changes nothing. The same as the MCP tool validate_toolset_presets.",
          }),
          ApiBody({
            type: ValidateToolsetPresetsDto,
            examples: {
              object: { summary: 'The toolsetPresets block as an object', value: { toolsetPresets: PRESETS_EXAMPLE } },
              config: { summary: "Muster's config.yaml as text", value: { config: 'toolsetPresets:\n  ops:\n    include:\n      - server: mcp-kubernetes\n      - {}\n' } },
            },
          }),
          ApiResponse({ status: 200, description: 'Whether Muster would start with these presets, and every error', type: PresetsValidationDto }),
          error(
            400,
            'invalid_request: neither or both of toolsetPresets and config were sent, or one is not of its type',
            errorExample('invalid_request', 'send one of toolsetPresets and config, not both: they are two ways of giving the same block', [
              { path: 'config', message: 'send one of toolsetPresets and config, not both: they are two ways of giving the same block' },
            ]),
          ),
        ],
      },
      tool: {
        title: 'Validate toolset presets',
        toolset: 'agents',
        description:
          "Checks a proposed toolsetPresets block for Muster (toolsetPresets as an object, or config as Muster's config.yaml text; exactly one) by Muster's start-up rules, and answers every error at once in Muster's words. Use it before rolling a preset change out to Muster: a config Muster refuses stops the gateway. Reads and changes nothing.",
        annotations: READ_ONLY,
        output: PresetsValidationDto,
      },
      input: { args: ValidateToolsetPresetsDto },
      service: PresetSource,
      call: async (presets, input) => presets.validate(input),
    }),
  ],
};
