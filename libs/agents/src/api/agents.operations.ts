import { ApiBody, ApiOperation, ApiParam, ApiQuery, ApiResponse } from '@app/common';
import type { ToolHints, ToolsetDeclaration } from '@app/mcp';
import { readValidateCommand } from './validate-command.js';
import {
  AgentRefDto,
  CreateAgentDto,
  DeleteAgentDto,
  ListAgentsQueryDto,
  ListOperationsQueryDto,
  OperationRefDto,
  REQUEST_EXAMPLES,
  RevisionDiffQueryDto,
  RevisionsQueryDto,
  RollbackAgentDto,
  UpdateAgentDto,
  ValidateAgentDto,
} from './requests.dto.js';
import {
  agentPath,
  CREATE_ERRORS,
  dryRunBody,
  error,
  errors,
  EXAMPLES,
  ifMatch,
  queryOf,
  READ_ERRORS,
  WRITE_ERRORS,
  writeHeaders,
  writePath,
} from './agents.openapi.js';
import {
  AgentDto,
  AgentPageDto,
  CreatedAgentDto,
  CreateDryRunDto,
  CreateResultDto,
  DeleteResultDto,
  InfoDto,
  AuditedOperationDto,
  OperationPageDto,
  RevisionDiffDto,
  RevisionListDto,
  RollbackResultDto,
  StatusDto,
  UpdateResultDto,
  ValidateResultDto,
} from './responses.dto.js';
import { AgentsService } from '../application/agents.service.js';
import { RevisionDiffs } from '../application/revision-diffs.service.js';
import { defineOperation, errorExample, replies, type OperationSet } from '@app/doors';
import { ServiceInfoService } from '../application/service-info.service.js';

const READ_STORE: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const READ_CLUSTER: ToolHints = { ...READ_STORE, openWorldHint: true };

const WRITE_NOTE =
  'With dryRun: true it answers as the write would and changes nothing. ' +
  'Where the policy makes it a proposal, it answers status: pending_approval with its change (id, who may approve, the manifest diff) and changes nothing until another person approves (tell the user; follow it with get_change).';

/** The agents module's MCP toolsets (docs/contract.md §7), after the transport's always-on `meta`. */
export const AGENT_TOOLSETS: readonly ToolsetDeclaration[] = [
  {
    name: 'agents',
    title: 'Agents',
    description: 'Read, validate, create, update and delete agents (one helm release of the Generic agent chart each), and read their live status.',
    instructions:
      'Call get_info before a first write: it gives the toolset limits (at most 32 selectors, the selector pattern) and the presets every installation has; list_toolset_presets lists the presets this installation defines, with their descriptions. ' +
      'An agent needs a toolset: the list of Muster selectors (preset:, server:, workflow:, tool:) it may use, written exactly as given; ["preset:none"] is a chat-only agent, and more than 32 selectors belong in a preset. ' +
      'Before a write, call validate_agent (or the write with dryRun: true) and show the user the violations or the rendered manifests. ' +
      'create_agent, update_agent and delete_agent change the cluster; after one, get_agent_status tells whether the Agent became ready. ' +
      'update_agent replaces the fields it is given (a toolset is replaced whole) and keeps the others.',
    default: true,
    always: false,
  },
  {
    name: 'revisions',
    title: 'Revisions',
    description: 'Every applied change of an agent (who, when, the values) and rolling an agent back to one of them. Opt-in: ?revisions on /mcp, --toolsets revisions over stdio.',
    instructions:
      'list_agent_revisions before rollback_agent: pick the revision by its values, not its number alone. A rollback is itself recorded as a new revision; try it with dryRun: true first.',
    default: false,
    always: false,
  },
  {
    name: 'audit',
    title: 'Audit',
    description: 'The journal of writes and refusals: who (subject, how authenticated, door, client), what, on which agent, the outcome. Opt-in: ?audit on /mcp; admin-only unless the policy grants list_operations.',
    instructions:
      "list_operations reads the journal newest first; filter by subject, namespace, agent, operation, outcome and time, and pass nextCursor for older entries. get_operation reads one entry by id (a write's lastOperation.id): poll it while a long write is pending.",
    default: false,
    always: false,
  },
];

const PROPOSAL_DOC = 'An approval rule of the policy made this write a proposal (docs/approvals.md): nothing was applied; status is pending_approval, change names it and Location is where to follow it (GET /api/v1/changes/{id})';

/** The agent named in the path (REST) or by namespace and name (MCP), read before the policy is asked: a refusal and its journal entry always name a valid agent. */
const agentRef = { path: AgentRefDto };

/**
 * The agent operations of docs/contract.md §3, each declared once: its REST route, its MCP tool,
 * the policy's name for it and what the policy decides on, and the call into the service.
 */
export const AGENT_OPERATIONS: OperationSet = {
  toolsets: AGENT_TOOLSETS,
  operations: [
    defineOperation({
      name: 'get_info',
      rest: {
        tag: 'agents',
        method: 'get',
        path: 'info',
        openapi: [
          ApiOperation({
            operationId: 'getInfo',
            summary: 'Service info: version, chart, helm, store, capabilities, toolset limits, shipped presets',
            description:
              'What this installation offers before you call it: the chart it installs, the helm it runs, the store, capability flags, the toolset grammar and the shipped presets. The same as the MCP tool get_info.',
          }),
          ApiResponse({ status: 200, description: 'The service and what it offers', type: InfoDto }),
          error(400, 'invalid_request: the X-Actor header cannot name anyone', EXAMPLES.invalidActor),
        ],
      },
      tool: {
        title: 'Service info',
        toolset: 'meta',
        description:
          'Reads what this installation offers: version, chart (reference, version, values-schema digest), helm version, store, capability flags, toolset limits (maximum selectors, selector pattern) and the presets every installation has. Writes nothing.',
        annotations: READ_STORE,
        output: InfoDto,
      },
      input: {},
      service: ServiceInfoService,
      call: (info, _read, _command, access) => info.info({ paths: access.isAdmin() }),
    }),
    defineOperation({
      name: 'list_agents',
      rest: {
        tag: 'agents',
        method: 'get',
        path: 'agents',
        args: 'query',
        openapi: [
          ApiOperation({
            operationId: 'listAgents',
            summary: 'List agents, filtered by namespace, label and status, cursor-paginated',
            description: 'Agents from the store (no helm run), oldest first; pass nextCursor as cursor for the next page. The same as the MCP tool list_agents.',
          }),
          queryOf(ListAgentsQueryDto),
          ApiResponse({ status: 200, description: 'One page of agents', type: AgentPageDto }),
          error(400, 'invalid_request: a filter or the page size is wrong; details name it', EXAMPLES.invalidQuery),
        ],
      },
      tool: {
        title: 'List agents',
        toolset: 'agents',
        description:
          "Lists agents from agent-manager's store, filtered by namespace, label (key=value or key) and status (active by default; deleted; all), 20 per page by default: pass nextCursor as cursor for the next page. Writes nothing.",
        annotations: READ_STORE,
        output: AgentPageDto,
      },
      input: { args: ListAgentsQueryDto },
      service: AgentsService,
      target: 'namespace',
      call: (agents, query, _command, access) => agents.list(query, { namespaceLike: access.namespaceLike('list_agents') }),
    }),
    defineOperation({
      name: 'get_agent',
      rest: {
        tag: 'agents',
        method: 'get',
        path: 'agents/:namespace/:name',
        openapi: [
          ApiOperation({
            operationId: 'getAgent',
            summary: 'One agent: record, chart values, toolset, revision, last operation',
            description: 'Read from the store (no helm run); the ETag header is the version to send in If-Match. The same as the MCP tool get_agent.',
          }),
          agentPath[0],
          agentPath[1],
          ApiResponse({ status: 200, description: 'The agent (ETag: its version)', type: AgentDto }),
          errors(READ_ERRORS),
        ],
        reply: replies.agent,
      },
      tool: {
        title: 'Get an agent',
        toolset: 'agents',
        description:
          "Reads one agent from the store: its declared fields, the chart values applied, its toolset exactly as written, its revision, and its last operation (a failed write shows here: with helm's message to admins, with the class of failure and a reference to others). Writes nothing.",
        annotations: READ_STORE,
        output: AgentDto,
      },
      input: agentRef,
      service: AgentsService,
      target: 'read',
      call: (agents, ref) => agents.get(ref),
    }),
    defineOperation({
      name: 'get_agent_status',
      rest: {
        tag: 'agents',
        method: 'get',
        path: 'agents/:namespace/:name/status',
        openapi: [
          ApiOperation({
            operationId: 'getAgentStatus',
            summary: 'Status verdict ready | progressing | failed | unknown with one sentence',
            description: "Reads the helm release and the live Agent's conditions, and names any drift from the store. The same as the MCP tool get_agent_status.",
          }),
          agentPath[0],
          agentPath[1],
          ApiResponse({ status: 200, description: 'The verdict and why', type: StatusDto }),
          errors(READ_ERRORS),
        ],
      },
      tool: {
        title: 'Agent status',
        toolset: 'agents',
        description:
          "Reads the live status of an agent from the cluster (its helm release and the Agent's conditions): a verdict ready | progressing | failed | unknown with one sentence saying why, and any drift from the store. Writes nothing.",
        annotations: READ_CLUSTER,
        output: StatusDto,
      },
      input: agentRef,
      service: AgentsService,
      target: 'read',
      call: (agents, ref, _command, access) => agents.status(ref, { admin: access.isAdmin() }),
    }),
    defineOperation({
      name: 'list_agent_revisions',
      rest: {
        tag: 'agents',
        method: 'get',
        path: 'agents/:namespace/:name/revisions',
        args: 'query',
        openapi: [
          ApiOperation({
            operationId: 'listAgentRevisions',
            summary: 'Every applied change: who, when, values',
            description:
              'From the store, oldest first; a revision number is what rollback takes. With life=all, also the revisions of earlier agents of the same name that were deleted, each marked with its life. The same as the MCP tool list_agent_revisions.',
          }),
          agentPath[0],
          agentPath[1],
          queryOf(RevisionsQueryDto),
          ApiResponse({ status: 200, description: 'The revisions of the agent', type: RevisionListDto }),
          errors(READ_ERRORS),
        ],
      },
      tool: {
        title: 'Agent revisions',
        toolset: 'revisions',
        description:
          'Reads every applied change of an agent from the store: revision number, kind, who applied it and when, and the declared fields and chart values of each. ' +
          'With life: "all", also the revisions of earlier agents of the same name that were deleted, each marked with its life. Writes nothing.',
        annotations: READ_STORE,
        output: RevisionListDto,
      },
      input: { ...agentRef, args: RevisionsQueryDto },
      service: AgentsService,
      target: 'read',
      call: (agents, ref, query) => agents.revisions(ref, query),
    }),
    defineOperation({
      name: 'diff_agent_revisions',
      rest: {
        tag: 'agents',
        method: 'get',
        path: 'agents/:namespace/:name/revisions/diff',
        args: 'query',
        openapi: [
          ApiOperation({
            operationId: 'diffAgentRevisions',
            summary: 'What changed between two revisions, or between a revision and the live object',
            description:
              'The spec fields that changed (before → after) and the unified diff of the rendered manifests, between any two revisions of any lives of the name (from=1:2&to=2:1), or, by default, between the current revision and the live object read from the cluster: that diff is drift. ' +
              "Each revision's values are rendered with helm template and the chart that revision used. The same as the MCP tool diff_agent_revisions.",
          }),
          agentPath[0],
          agentPath[1],
          queryOf(RevisionDiffQueryDto),
          ApiResponse({ status: 200, description: 'The fields and manifest lines that differ', type: RevisionDiffDto }),
          errors([...READ_ERRORS, error(502, "backend_error: helm or the cluster could not be read; the message is helm's or the API server's", EXAMPLES.backend)]),
        ],
      },
      tool: {
        title: 'Diff agent revisions',
        toolset: 'revisions',
        description:
          'Reads what changed between two revisions of an agent: the spec fields (before → after) and the unified diff of the manifests each renders with the chart it used. ' +
          'from and to are revision numbers, or "<life>:<revision>" to cross a delete and re-create (lives as list_agent_revisions with life: "all" numbers them). ' +
          'Without to, it compares with the live object on the cluster, so a hand edit shows as drift; without from, it starts at the revision before to. Writes nothing.',
        annotations: READ_CLUSTER,
        output: RevisionDiffDto,
      },
      input: { ...agentRef, args: RevisionDiffQueryDto },
      service: RevisionDiffs,
      target: 'read',
      call: (diffs, ref, query) => diffs.diff(ref, query),
    }),
    defineOperation({
      name: 'validate_agent',
      rest: {
        tag: 'agents',
        method: 'post',
        path: 'agents/validate',
        status: 200,
        args: 'body',
        strict: true,
        openapi: [
          ApiOperation({
            operationId: 'validateAgent',
            summary: 'Validate a create or update without writing: every violation plus the rendered manifests',
            description:
              'valid: false with every violation is an answer (200), not an error; 400 is only for a request that cannot be read at all. The same as the MCP tool validate_agent.',
          }),
          ApiBody({ type: ValidateAgentDto, examples: { create: { summary: 'Would the incident-helper agent be accepted?', value: REQUEST_EXAMPLES.validate } } }),
          ApiResponse({ status: 200, description: 'The verdict, every violation and the manifests', type: ValidateResultDto }),
          error(400, 'invalid_request: the request could not be read at all', EXAMPLES.invalid),
        ],
      },
      tool: {
        title: 'Validate an agent',
        toolset: 'agents',
        description:
          'Checks a create (mode: "create", the default) or an update of an existing agent (mode: "update") without writing anything: answers valid, every violation with its field, non-blocking warnings, and the manifests helm would render. valid: false is an answer, not an error.',
        annotations: READ_STORE,
        output: ValidateResultDto,
      },
      input: { args: ValidateAgentDto },
      service: AgentsService,
      read: ({ args }) => readValidateCommand(args),
      authorize: (access, command) => access.authorizeValidate(command),
      call: (agents, command) => agents.validate(command),
    }),
    defineOperation({
      name: 'create_agent',
      rest: {
        tag: 'agents',
        method: 'post',
        path: 'agents',
        args: 'body',
        strict: true,
        openapi: [
          ApiOperation({
            operationId: 'createAgent',
            summary: 'Create an agent (one helm release of the Generic agent chart); dryRun answers with the values and manifests',
            description:
              'Installs a helm release that renders a kagent Agent and records it as revision 1 (201). With dryRun: true nothing is written and the answer (200) holds the values and manifests it would write. The example body is a dry run. The same as the MCP tool create_agent.',
          }),
          ApiBody({ type: CreateAgentDto, examples: dryRunBody('Dry run of the incident-helper agent (writes nothing)', REQUEST_EXAMPLES.create) }),
          errors(writeHeaders),
          ApiResponse({ status: 201, description: 'Created: the agent exists now (ETag: its version)', type: CreatedAgentDto }),
          ApiResponse({ status: 200, description: 'Dry run: what would be written; nothing was', type: CreateDryRunDto }),
          ApiResponse({ status: 202, description: PROPOSAL_DOC, type: CreateResultDto }),
          errors(CREATE_ERRORS),
        ],
        reply: replies.created,
      },
      tool: {
        title: 'Create an agent',
        toolset: 'agents',
        description:
          'Writes: installs a new helm release of the Generic agent chart in the namespace, which creates a kagent Agent on the cluster, and records it (revision 1). ' +
          'name (DNS-1123 label, at most 53 characters) is yours to choose; modelConfig and toolset are required. Fails with conflict when the agent exists (use update_agent). ' +
          WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
        output: CreateResultDto,
        task: true,
      },
      input: { args: CreateAgentDto },
      service: AgentsService,
      target: 'read',
      writeHeaders: ['idempotencyKey'],
      call: (agents, input, _command, access) => agents.create(access.caller, input),
    }),
    defineOperation({
      name: 'update_agent',
      rest: {
        tag: 'agents',
        method: 'patch',
        path: 'agents/:namespace/:name',
        args: 'body',
        strict: true,
        openapi: [
          ApiOperation({
            operationId: 'updateAgent',
            summary: 'Update an agent: fields sent replace theirs (toolset, labels, annotations whole); fields omitted are kept',
            description:
              'Upgrades the helm release and records a new revision; an update that changes nothing runs no helm (changed: false). The example body is a dry run. The same as the MCP tool update_agent.',
          }),
          writePath[0],
          writePath[1],
          ApiBody({ type: UpdateAgentDto, examples: dryRunBody('Dry run: add server:github to the toolset (writes nothing)', REQUEST_EXAMPLES.update) }),
          errors([...writeHeaders, ifMatch]),
          ApiResponse({ status: 200, description: 'The values before and after (ETag: the new version)', type: UpdateResultDto }),
          ApiResponse({ status: 202, description: PROPOSAL_DOC, type: UpdateResultDto }),
          errors(WRITE_ERRORS),
        ],
        reply: replies.written,
      },
      tool: {
        title: 'Update an agent',
        toolset: 'agents',
        description:
          "Writes: upgrades the agent's helm release on the cluster with the fields given (toolset, labels and annotations are replaced whole; fields left out are kept) and records a new revision. An update that changes nothing runs no helm and answers changed: false. " +
          WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        output: UpdateResultDto,
        task: true,
      },
      input: { ...agentRef, args: UpdateAgentDto },
      service: AgentsService,
      target: 'read',
      writeHeaders: ['idempotencyKey', 'expectedVersion'],
      call: (agents, ref, command, access) => agents.update(access.caller, ref, command),
    }),
    defineOperation({
      name: 'delete_agent',
      rest: {
        tag: 'agents',
        method: 'delete',
        path: 'agents/:namespace/:name',
        args: deleteArgs,
        strict: true,
        reply: replies.removed,
        openapi: [
          ApiOperation({
            operationId: 'deleteAgent',
            summary: 'Delete an agent: uninstalls its release; the record and history are kept as deleted',
            description: 'Arguments come in the query (a body is refused). The same as the MCP tool delete_agent.',
          }),
          writePath[0],
          writePath[1],
          ApiQuery({
            name: 'dryRun',
            required: false,
            description: 'Answer as the delete would, remove nothing (the example is a dry run: choose false to delete)',
            schema: { type: 'boolean', example: true },
          }),
          errors([...writeHeaders, ifMatch]),
          ApiResponse({ status: 200, description: 'What was removed (or would be)', type: DeleteResultDto }),
          ApiResponse({ status: 202, description: PROPOSAL_DOC, type: DeleteResultDto }),
          errors(WRITE_ERRORS),
        ],
      },
      tool: {
        title: 'Delete an agent',
        toolset: 'agents',
        description:
          "Writes: uninstalls the agent's helm release, which removes its Agent from the cluster; the record and its revisions are kept in the store as deleted. " + WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        output: DeleteResultDto,
        task: true,
      },
      input: { ...agentRef, args: DeleteAgentDto },
      service: AgentsService,
      target: 'read',
      writeHeaders: ['idempotencyKey', 'expectedVersion'],
      call: (agents, ref, command, access) => agents.delete(access.caller, ref, command),
      confirm: ({ namespace, name }) =>
        `delete_agent uninstalls the helm release of agent ${namespace}/${name}: its Agent leaves the cluster; its record and revisions stay in the store (as deleted).`,
    }),
    defineOperation({
      name: 'rollback_agent',
      rest: {
        tag: 'agents',
        method: 'post',
        path: 'agents/:namespace/:name/rollback',
        status: 200,
        args: 'body',
        strict: true,
        openapi: [
          ApiOperation({
            operationId: 'rollbackAgent',
            summary: "Roll back to a revision's values; the rollback is recorded as a new revision",
            description:
              'Applies the values of an earlier revision with helm and records them as a new revision. The example body is a dry run. The same as the MCP tool rollback_agent.',
          }),
          writePath[0],
          writePath[1],
          ApiBody({ type: RollbackAgentDto, examples: dryRunBody('Dry run: back to revision 1 (writes nothing)', REQUEST_EXAMPLES.rollback) }),
          errors([...writeHeaders, ifMatch]),
          ApiResponse({ status: 200, description: 'The values before and after (ETag: the new version)', type: RollbackResultDto }),
          ApiResponse({ status: 202, description: PROPOSAL_DOC, type: RollbackResultDto }),
          errors(WRITE_ERRORS),
        ],
        reply: replies.written,
      },
      tool: {
        title: 'Roll back an agent',
        toolset: 'revisions',
        description:
          "Writes: restores the values of an earlier revision to the agent's helm release on the cluster and records the rollback as a new revision. " + WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        output: RollbackResultDto,
        task: true,
      },
      input: { ...agentRef, args: RollbackAgentDto },
      service: AgentsService,
      target: 'read',
      writeHeaders: ['idempotencyKey', 'expectedVersion'],
      call: (agents, ref, command, access) => agents.rollback(access.caller, ref, command),
      confirm: (ref: AgentRefDto, agents: AgentsService, { args }) => rollbackSummary(agents, ref, (args as { revision?: unknown } | undefined)?.revision),
    }),
    defineOperation({
      name: 'list_operations',
      rest: {
        // The journal on REST under its own tag.
        tag: 'audit',
        method: 'get',
        path: 'operations',
        args: 'query',
        openapi: [
          ApiOperation({
            operationId: 'listOperations',
            summary: 'The audit trail: every write and every refusal by authorization, newest first',
            description:
              'Who (subject, how authenticated, door, MCP client, request id), what, on which agent, the outcome; filtered by subject, namespace, name, operation, outcome and time, cursor-paginated. ' +
              'Admin-only unless the policy grants list_operations. The same as the MCP tool list_operations.',
          }),
          queryOf(ListOperationsQueryDto),
          ApiResponse({ status: 200, description: 'One page of the journal', type: OperationPageDto }),
          error(400, 'invalid_request: a filter or the page size is wrong; details name it', EXAMPLES.invalidQuery),
        ],
      },
      tool: {
        title: 'Audit trail',
        toolset: 'audit',
        description:
          'Reads the journal newest first: every write and every refusal by authorization, with who (subject, how authenticated, door, MCP client, request id), the operation, the agent and the outcome (pending, succeeded, failed, refused). ' +
          'Filter by subject, namespace, name, operation, outcome and time (since, until); pass nextCursor as cursor for older entries. Writes nothing.',
        annotations: READ_STORE,
        output: OperationPageDto,
      },
      input: { args: ListOperationsQueryDto },
      service: AgentsService,
      target: 'namespace',
      call: (agents, query, _command, access) =>
        agents.operations(query, { namespacePatterns: access.namespacePatterns('list_operations'), reader: access.journalReader() }),
    }),
    defineOperation({
      name: 'get_operation',
      rest: {
        tag: 'audit',
        method: 'get',
        path: 'operations/:id',
        openapi: [
          ApiOperation({
            operationId: 'getOperation',
            summary: 'One journal entry: a write while it runs (pending) and once it ended, or a refusal',
            description:
              "The entry a write's answer names (its agent's lastOperation.id): its outcome (pending, succeeded, failed, refused), who, when, and why it failed. " +
              'Readable by whoever may read the journal (list_operations or get_operation) in its namespace; any other id answers 404. The same as the MCP tool get_operation.',
          }),
          ApiParam({ name: 'id', description: "The entry's id", schema: { type: 'string', example: 'c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11' } }),
          ApiResponse({ status: 200, description: 'The entry', type: AuditedOperationDto }),
          error(400, 'invalid_request: the id is not one this service makes', errorExample('invalid_request', 'id must be an operation id', [{ path: 'id', message: "id must be an operation id as a write's lastOperation.id or list_operations answers it" }])),
          error(404, 'not_found: no entry with this id in the journal the caller may read', errorExample('not_found', 'no operation c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11 in the journal you may read')),
        ],
      },
      tool: {
        title: 'One journal entry',
        toolset: 'audit',
        description:
          "Reads one journal entry by id (a write's lastOperation.id, or an id from list_operations): the operation, the agent, the outcome (pending while helm runs, then succeeded or failed; refused), who and when. " +
          'Poll it to follow a long write. Writes nothing.',
        annotations: READ_STORE,
        output: AuditedOperationDto,
        operations: ['list_operations'],
      },
      input: { path: OperationRefDto },
      service: AgentsService,
      authorize: async (access) => {
        // Reading the journal somewhere is the grant; where the entry is decides below, unseen ids and unreadable ones alike 404.
        if (!access.isAllowed('get_operation') && !access.isAllowed('list_operations')) await access.authorize('get_operation', {});
      },
      call: (agents, { id }, _command, access) =>
        agents.operation(id, {
          visible: (namespace) => access.isAllowed('get_operation', namespace) || access.isAllowed('list_operations', namespace),
          reader: access.journalReader(),
        }),
    }),
  ],
};

/**
 * What rollback_agent asks the person: the revision the agent is at, the one whose values come
 * back and which fields of its spec that changes, from the stored revisions (no helm run). Nothing
 * to ask when the agent does not exist: the call refuses.
 */
async function rollbackSummary(agents: AgentsService, ref: AgentRefDto, revision: unknown): Promise<string | undefined> {
  const list = await agents.revisions(ref).catch(() => null);
  if (!list || list.current === null) return undefined;
  const at = (n: unknown) => list.items.find((item) => item.revision === n)?.spec as Record<string, unknown> | undefined;
  const [now, then] = [at(list.current), at(revision)];
  const changed = now && then ? [...new Set([...Object.keys(now), ...Object.keys(then)])].filter((key) => JSON.stringify(now[key]) !== JSON.stringify(then[key])) : undefined;
  const changes = changed === undefined ? '' : changed.length === 0 ? ' (its spec stays the same)' : ` (changes ${changed.join(', ')})`;
  return `rollback_agent moves agent ${ref.namespace}/${ref.name} from revision ${list.current} back to the values of revision ${String(revision)} with helm${changes}, recorded as a new revision.`;
}

/** DELETE carries its arguments in the query: "true"/"false" and digits become booleans and numbers; anything else is refused by the DTO. */
function deleteArgs(query: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = { ...query };
  if (input.dryRun === 'true') input.dryRun = true;
  else if (input.dryRun === 'false') input.dryRun = false;
  if (typeof input.expectedVersion === 'string' && /^\d+$/.test(input.expectedVersion)) input.expectedVersion = Number(input.expectedVersion);
  return input;
}
