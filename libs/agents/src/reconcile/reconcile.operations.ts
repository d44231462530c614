import { ApiBody, ApiOperation, ApiResponse } from '@app/common';
import type { ToolsetDeclaration } from '@app/mcp';
import { REQUEST_EXAMPLES } from '../api/requests.dto.js';
import { defineOperation, errorExample, type OperationSet } from '@app/doors';
import { AGENT, error, EXAMPLES, invalid } from '../api/agents.openapi.js';
import { AdoptAgentDto, AdoptResultDto, ReconcileRequestDto, ReconcileResultDto } from './reconcile.dto.js';
import { Reconciler } from './reconcile.service.js';

export const ADMIN_TOOLSET: ToolsetDeclaration = {
  name: 'admin',
  title: 'Administration',
  description: 'Bring the store, helm releases and live Agents back into agreement, adopt releases the store lost, and export or import the fleet as a document. Opt-in: ?toolsets=admin on /mcp.',
  instructions:
    'Call reconcile_agents with dryRun: true first and show the user what it would do; reports (drift, missing) are never acted on. ' +
    'adopt_agent takes a release of the agent chart the store does not know into the store with its helm history. ' +
    'export_agents writes the fleet as a YAML document; call import_agents with dryRun: true first and show the plan before applying a document.',
  default: false,
  always: false,
};

const backend = error(502, "backend_error: helm or the cluster failed (listing or reading the releases); the message is helm's", EXAMPLES.backend);

/**
 * The reconciler and adoption, each declared once for both doors: authorized by the policy first
 * (a reconcile of every namespace needs the operation granted on "*"), refusals journaled.
 */
export const RECONCILE_OPERATIONS: OperationSet = {
  toolsets: [ADMIN_TOOLSET],
  operations: [
    defineOperation({
      name: 'reconcile_agents',
      rest: {
        tag: 'admin',
        method: 'post',
        path: 'reconcile',
        status: 200,
        args: 'body',
        openapi: [
          ApiOperation({
            operationId: 'reconcileAgents',
            summary: 'Bring store, helm releases and live Agents back into agreement now',
            description:
              'For one agent or all: compares the store, the helm release and the live Agent and acts by the decision table (record a landed create, uninstall or re-install a half-release, roll back a stuck change) or reports drift. With dryRun it lists what it would do. The same as the MCP tool reconcile_agents.',
          }),
          ApiBody({ type: ReconcileRequestDto, examples: { dryRun: { summary: 'Dry run: what reconcile would do for every agent (does nothing)', value: REQUEST_EXAMPLES.reconcile } } }),
          ApiResponse({ status: 200, description: 'What was found per agent and what was (or would be) done', type: ReconcileResultDto }),
          error(400, 'invalid_request: the input is wrong (a name needs its namespace); details name each field', errorExample('invalid_request', 'name needs a namespace: pass both, or neither to reconcile every agent', [{ path: 'namespace', message: 'required with name' }])),
          backend,
        ],
      },
      tool: {
        title: 'Reconcile agents',
        toolset: 'admin',
        description:
          'Compares the store, the helm release and the live Agent of one agent (namespace and name) or all, and acts by the decision table: records a create helm deployed, uninstalls or re-installs a half-release, rolls back a change helm left pending; drift and missing releases are reported, not overwritten. With dryRun: true it lists what it would do and changes nothing.',
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        output: ReconcileResultDto,
      },
      input: { args: ReconcileRequestDto },
      service: Reconciler,
      target: (input) => ({ namespace: input.namespace ?? '*', name: input.name }),
      call: (reconciler, input, _command, access) => reconciler.reconcile(access.caller, input),
      confirm: (input) =>
        `reconcile_agents acts on ${input.name ? `agent ${input.namespace}/${input.name}` : input.namespace ? `every agent in ${input.namespace}` : 'every agent'} by the decision table: it may uninstall or re-install half-installed releases and roll back changes helm left pending.`,
    }),
    defineOperation({
      name: 'adopt_agent',
      rest: {
        tag: 'admin',
        method: 'post',
        path: 'agents/adopt',
        status: 200,
        args: 'body',
        openapi: [
          ApiOperation({
            operationId: 'adoptAgent',
            summary: 'Take a release of the agent chart the store does not know into the store',
            description:
              'Records the release as an agent with its helm history as revisions (e.g. after the store was lost). `agent-manager store rebuild` adopts every such release. The same as the MCP tool adopt_agent.',
          }),
          ApiBody({ type: AdoptAgentDto, examples: { dryRun: { summary: 'Dry run: the revisions adopting a release would take in (writes nothing)', value: REQUEST_EXAMPLES.adopt } } }),
          ApiResponse({ status: 200, description: 'The adopted agent and the revisions taken in', type: AdoptResultDto }),
          invalid,
          error(404, 'not_found: helm has no such release', errorExample('not_found', `helm has no release ${AGENT} to adopt: list the cluster's releases with helm list --all-namespaces`)),
          error(
            409,
            'conflict: the agent is in the store already, the release is not deployed or declares no toolset, or a write holds the name; gitops_owned: Flux or Argo CD manages the release (docs/contract.md §13), the message names the owner',
            errorExample('conflict', `agent ${AGENT} is already in the store: nothing to adopt (reconcile_agents compares it with its release)`),
          ),
          backend,
          error(503, 'unavailable: this replica is shutting down; another replica answers', EXAMPLES.unavailable),
        ],
      },
      tool: {
        title: 'Adopt an agent release',
        toolset: 'admin',
        description:
          'Writes the store only: takes a release of the agent chart that the store does not know (e.g. after the store was lost) into the store as an agent, with its helm history as revisions. With dryRun: true it lists the revisions it would take in.',
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
        output: AdoptResultDto,
      },
      input: { args: AdoptAgentDto },
      service: Reconciler,
      target: 'read',
      call: (reconciler, input, _command, access) => reconciler.adopt(access.caller, input),
    }),
  ],
};
