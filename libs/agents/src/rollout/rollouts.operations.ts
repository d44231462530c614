import { ApiBody, ApiOperation, ApiParam, ApiResponse } from '@app/common';
import type { ToolsetDeclaration } from '@app/mcp';
import { defineOperation, errorExample, type OperationSet } from '@app/doors';
import { error, EXAMPLES, invalid } from '../api/agents.openapi.js';
import { ListRolloutsQueryDto, RolloutDto, RolloutListDto, RolloutRefDto, StartRolloutDto, StartRolloutResultDto } from './rollouts.dto.js';
import { FleetRollouts } from './rollouts.service.js';

export const FLEET_TOOLSET: ToolsetDeclaration = {
  name: 'fleet',
  title: 'Fleet rollouts',
  description: 'Move a chart release to many agents in health-gated waves, and follow, pause, resume or cancel it. Opt-in: ?toolsets=fleet on /mcp.',
  instructions:
    'Call start_fleet_rollout with dryRun: true first and show the user the plan (chart and values from → to, the manifest diff per agent). ' +
    'A real rollout runs in the background: follow it with get_fleet_rollout until its state is succeeded, failed or cancelled.',
  default: false,
  always: false,
};

const idParam = ApiParam({ name: 'id', description: "The rollout's id, as start_fleet_rollout answered it", schema: { type: 'string', pattern: '^r-[0-9a-f]{8,32}$', example: 'r-3b1f0c9a12ab' } });
const notFound = error(404, 'not_found: no rollout has this id', errorExample('not_found', 'no rollout r-3b1f0c9a12ab: list them with list_fleet_rollouts'));
const conflict = error(409, 'conflict: the rollout is not in a state this step applies to', errorExample('conflict', 'rollout r-3b1f0c9a12ab is succeeded: only a rollout that is running can be made paused'));

/** The agents a rollout's selector picks, in words for the person asked to confirm it. */
function selectorSummary(selector: StartRolloutDto['selector']): string {
  const parts = [
    selector?.namespaces?.length ? `in ${selector.namespaces.join(', ')}` : 'in every namespace',
    selector?.labels && Object.keys(selector.labels).length > 0 ? `labelled ${Object.entries(selector.labels).map(([k, v]) => `${k}=${v}`).join(', ')}` : '',
    selector?.blueprint ? `made from blueprint ${selector.blueprint}` : '',
    selector?.agents?.length ? `among ${selector.agents.join(', ')}` : '',
  ];
  return parts.filter((part) => part !== '').join(', ');
}

/** One of the steps that move a stored rollout between states (pause, resume, cancel), declared alike. */
function step(name: 'pause_fleet_rollout' | 'resume_fleet_rollout' | 'cancel_fleet_rollout', verb: string, summary: string, description: string) {
  const method = name.split('_')[0] as 'pause' | 'resume' | 'cancel';
  return defineOperation({
    name,
    rest: {
      tag: 'fleet',
      method: 'post',
      path: `fleet/rollouts/:id/${method}`,
      status: 200,
      args: 'body',
      openapi: [
        ApiOperation({ operationId: `${method}FleetRollout`, summary, description: `${description} The same as the MCP tool ${name}.` }),
        idParam,
        ApiResponse({ status: 200, description: `The rollout, ${verb}`, type: RolloutDto }),
        invalid,
        notFound,
        conflict,
      ],
    },
    tool: {
      title: summary,
      toolset: 'fleet',
      description,
      annotations: { readOnlyHint: false, destructiveHint: method === 'cancel', idempotentHint: false, openWorldHint: false },
      output: RolloutDto,
    },
    input: { path: RolloutRefDto },
    service: FleetRollouts,
    target: { namespace: '*' },
    call: (rollouts, ref, _command, access) => rollouts[method](access.caller, ref),
    confirm:
      method === 'cancel'
        ? (ref) => `cancel_fleet_rollout stops rollout ${ref.id}: agents it has not moved yet stay on their chart; agents it moved are not moved back.`
        : undefined,
  });
}

/**
 * Fleet rollouts, each declared once for both doors. Starting one needs start_fleet_rollout in each
 * namespace its selector names (on "*" when it names none); the steps and reads act on rollouts,
 * which span namespaces, so they are granted on "*".
 */
export const ROLLOUT_OPERATIONS: OperationSet = {
  toolsets: [FLEET_TOOLSET],
  operations: [
    defineOperation({
      name: 'start_fleet_rollout',
      rest: {
        tag: 'fleet',
        method: 'post',
        path: 'fleet/rollouts',
        status: 202,
        args: 'body',
        openapi: [
          ApiOperation({
            operationId: 'startFleetRollout',
            summary: 'Move a chart release to the agents a selector picks, in health-gated waves',
            description:
              'Plans the agents the selector picks into waves (a canary, then batches) and moves each through the write pipeline (its own journal entry, lease, and If-Match on the version planned). After each wave, its agents must report Accepted and Ready within the gate timeout; a wave that takes the failures past the budget is rolled back and the rollout stops. With dryRun: true it answers the plan per agent and writes nothing. A real rollout answers 202 with Location: follow it with GET /api/v1/fleet/rollouts/{id}. The same as the MCP tool start_fleet_rollout.',
          }),
          ApiBody({ type: StartRolloutDto, examples: { dryRun: { summary: 'Dry run: the plan for the agents of one namespace', value: { version: '0.6.1', selector: { namespaces: ['agents'] }, waves: [1, 5], dryRun: true } } } }),
          ApiResponse({ status: 202, description: 'The rollout, stored and moving (Location: where to follow it)', type: StartRolloutResultDto }),
          ApiResponse({ status: 200, description: 'A dry run: the plan per agent; with wait: the rollout once it stopped moving', type: StartRolloutResultDto }),
          invalid,
          error(502, "backend_error: helm failed rendering the plan (a dry run); the message is helm's", EXAMPLES.backend),
        ],
        reply: (answer) => {
          const { rollout } = answer as StartRolloutResultDto;
          return rollout?.state === 'running' ? { location: `/api/v1/fleet/rollouts/${rollout.id}` } : { status: 200 };
        },
      },
      tool: {
        title: 'Start a fleet rollout',
        toolset: 'fleet',
        description:
          'Moves a chart release (default: the configured chart) to the agents a selector picks (namespaces, labels, blueprint, agents as namespace/name), wave by wave: a canary, then batches (waves: [1, 5] by default, the last size repeating). Each wave must report Accepted and Ready within gateTimeoutSeconds; past the failure budget the wave is rolled back and the rollout stops. dryRun: true answers the plan per agent (chart and values from → to, manifest diff) and changes nothing. A real rollout runs in the background: follow it with get_fleet_rollout, or pass wait: true to be told each agent as it settles (notifications) and answered when the rollout ends.',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        output: StartRolloutResultDto,
      },
      input: { args: StartRolloutDto },
      service: FleetRollouts,
      authorize: async (access, input) => {
        for (const namespace of input.selector?.namespaces?.length ? input.selector.namespaces : ['*']) await access.authorize('start_fleet_rollout', { namespace });
      },
      call: (rollouts, input, _command, access) => rollouts.start(access.caller, input),
      confirm: (input) => `start_fleet_rollout upgrades with helm, wave by wave (${(input.waves ?? [1, 5]).join(', ')}), the agents ${selectorSummary(input.selector)} to ${input.chart ?? 'the configured chart'}${input.version ? ` ${input.version}` : ''}.`,
    }),
    defineOperation({
      name: 'get_fleet_rollout',
      rest: {
        tag: 'fleet',
        method: 'get',
        path: 'fleet/rollouts/:id',
        openapi: [
          idParam,
          ApiOperation({ operationId: 'getFleetRollout', summary: 'A rollout: its state, waves, and what became of each agent', description: 'Per agent: upgraded, unchanged, failed, rolledBack, skipped (each with the reason) or pending. The same as the MCP tool get_fleet_rollout.' }),
          ApiResponse({ status: 200, description: 'The rollout', type: RolloutDto }),
          invalid,
          notFound,
        ],
      },
      tool: {
        title: 'Get a fleet rollout',
        toolset: 'fleet',
        description: 'Reads a rollout: its state (running, paused, cancelled, succeeded, failed), the wave it is in, and per agent upgraded, unchanged, failed, rolledBack, skipped (with the reason) or pending. Writes nothing.',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        output: RolloutDto,
      },
      input: { path: RolloutRefDto },
      service: FleetRollouts,
      target: { namespace: '*' },
      call: (rollouts, ref) => rollouts.get(ref),
    }),
    defineOperation({
      name: 'list_fleet_rollouts',
      rest: {
        tag: 'fleet',
        method: 'get',
        path: 'fleet/rollouts',
        args: 'query',
        openapi: [
          ApiOperation({ operationId: 'listFleetRollouts', summary: 'Rollouts, newest first', description: 'With their counts per agent state; get_fleet_rollout lists the agents. The same as the MCP tool list_fleet_rollouts.' }),
          ApiResponse({ status: 200, description: 'Rollouts, newest first', type: RolloutListDto }),
          invalid,
        ],
      },
      tool: {
        title: 'List fleet rollouts',
        toolset: 'fleet',
        description: 'Lists rollouts newest first (state narrows), with their counts per agent state. Writes nothing.',
        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
        output: RolloutListDto,
      },
      input: { args: ListRolloutsQueryDto },
      service: FleetRollouts,
      target: { namespace: '*' },
      call: (rollouts, query) => rollouts.list(query),
    }),
    step('pause_fleet_rollout', 'paused', 'Pause a rollout between agents', 'Stops a running rollout after the agents being moved now; resume_fleet_rollout moves it on from there.'),
    step('resume_fleet_rollout', 'running again', 'Resume a paused rollout', 'Moves a paused rollout on from the agents it had not moved yet.'),
    step('cancel_fleet_rollout', 'cancelled', 'Cancel a rollout', 'Ends a running or paused rollout: the agents not moved yet are skipped; the ones moved stay on the new chart (roll one back with rollback_agent).'),
  ],
};
