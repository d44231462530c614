import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { Authorizer } from '@app/auth';
import { OperationContexts } from '@app/common';
import { McpRegistry, type ToolHints, type ToolsetDeclaration, type ToolSpec } from '@app/mcp';
import { recordableActor } from './actor.js';
import { readValidateCommand } from './agents.commands.js';
import {
  AgentRefDto,
  CreateAgentDto,
  DeleteAgentDto,
  ListAgentsQueryDto,
  ListOperationsQueryDto,
  RevisionsQueryDto,
  RollbackAgentDto,
  UpdateAgentDto,
  ValidateAgentDto,
} from './agents.dto.js';
import { parseInput } from './agents.input.js';
import {
  AgentDto,
  AgentPageDto,
  CreateResultDto,
  DeleteResultDto,
  InfoDto,
  OperationPageDto,
  RevisionListDto,
  RollbackResultDto,
  StatusDto,
  UpdateResultDto,
  ValidateResultDto,
} from './agents.responses.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentsService } from './agents.service.js';
import { AGENT_OPERATIONS, AgentAccess } from './audit/agent-access.js';
import { answerForCaller, forCaller } from './audit/backend-errors.js';
import { ErrorResponseDto } from './error-response.dto.js';
import { ServiceInfoService } from './service-info.service.js';

const READ_STORE: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const READ_CLUSTER: ToolHints = { ...READ_STORE, openWorldHint: true };

const WRITE_NOTE = 'With dryRun: true it answers as the write would and changes nothing.';

/**
 * Runs a tool with the MCP client's name made recordable by the journal's actor rule (the REST
 * door refuses what X-Actor breaks it); helm's own words reach admins only, in errors and in answers.
 */
export function recorded(spec: ToolSpec, access: AgentAccess): ToolSpec {
  return {
    ...spec,
    run: (args, context) => {
      const current = OperationContexts.current();
      const client = current.client === undefined ? undefined : recordableActor(current.client);
      return OperationContexts.run({ ...current, actor: recordableActor(current.actor), client }, async () => {
        try {
          return answerForCaller(await spec.run(args, context), access.isAdmin());
        } catch (error) {
          throw forCaller(error, access.isAdmin());
        }
      });
    },
  };
}

/**
 * The agent a tool call names (REST's path), read first: as on REST, an unreadable reference is
 * refused (400) before the policy is asked, so a refusal and its journal entry always name a
 * valid agent. The rest of the arguments (REST's body or query) are read after the policy agreed.
 */
function refOf(args: Record<string, unknown>): AgentRefDto {
  return parseInput(AgentRefDto, { namespace: args.namespace, name: args.name });
}

/** The arguments after the agent reference, as the command REST reads from the body or query. */
function commandOf<T extends object>(args: Record<string, unknown>, command: new () => T): T {
  const { namespace: _namespace, name: _name, ...rest } = args;
  return parseInput(command, rest);
}

/** The agents module's MCP toolsets (docs/contract.md §7), after the transport's always-on `meta`. */
export const AGENT_TOOLSETS: readonly ToolsetDeclaration[] = [
  {
    name: 'agents',
    title: 'Agents',
    description: 'Read, validate, create, update and delete agents (one helm release of the Generic agent chart each), and read their live status.',
    instructions:
      'Call get_info before a first write: it gives the toolset limits (at most 32 selectors, the selector pattern) and the presets every installation has. ' +
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
    instructions: 'list_operations reads the journal newest first; filter by subject, namespace, agent, operation, outcome and time, and pass nextCursor for older entries.',
    default: false,
    always: false,
  },
];

/**
 * The agent operations of docs/contract.md §3 as MCP tools, over AgentsService and ServiceInfoService,
 * contributed to the MCP registry when the module starts.
 */
@Injectable()
export class AgentsTools implements OnModuleInit, OnModuleDestroy {
  /** The tools' names (and the REST door's operations): what AUTHZ_POLICY_FILE may grant. */
  static readonly operations: readonly string[] = AGENT_OPERATIONS;

  private readonly access: AgentAccess;

  constructor(
    private readonly agents: AgentsService,
    private readonly serviceInfo: ServiceInfoService,
    private readonly registry: McpRegistry,
    authorizer: Authorizer,
    repository: AgentsRepository,
  ) {
    this.access = new AgentAccess(authorizer, repository);
  }

  onModuleInit(): void {
    this.registry.useErrorModel(ErrorResponseDto);
    for (const toolset of AGENT_TOOLSETS) this.registry.addToolset(toolset);
    this.registry.addTools(this.list().map((spec) => recorded(spec, this.access)));
  }

  onModuleDestroy(): void {
    for (const toolset of AGENT_TOOLSETS) this.registry.removeToolset(toolset.name);
    this.registry.removeTools(['get_info']);
  }

  list(): ToolSpec[] {
    return [
      {
        name: 'get_info',
        title: 'Service info',
        toolset: 'meta',
        description:
          'Reads what this installation offers: version, chart (reference, version, values-schema digest), helm version, store, capability flags, toolset limits (maximum selectors, selector pattern) and the presets every installation has. Writes nothing.',
        annotations: READ_STORE,
        input: [],
        output: InfoDto,
        run: async () => {
          await this.access.authorize('get_info');
          return this.serviceInfo.info({ paths: this.access.isAdmin() });
        },
      },
      {
        name: 'list_agents',
        title: 'List agents',
        toolset: 'agents',
        description:
          'Lists agents from agent-manager\'s store, filtered by namespace, label (key=value or key) and status (active by default; deleted; all), 20 per page by default: pass nextCursor as cursor for the next page. Writes nothing.',
        annotations: READ_STORE,
        input: [ListAgentsQueryDto],
        output: AgentPageDto,
        run: async (args) => {
          const input = parseInput(ListAgentsQueryDto, args);
          await this.access.authorize('list_agents', { namespace: input.namespace });
          return this.agents.list(input, { namespaceLike: this.access.namespaceLike('list_agents') });
        },
      },
      {
        name: 'get_agent',
        title: 'Get an agent',
        toolset: 'agents',
        description:
          'Reads one agent from the store: its declared fields, the chart values applied, its toolset exactly as written, its revision, and its last operation (a failed write shows here: with helm\'s message to admins, with the class of failure and a reference to others). Writes nothing.',
        annotations: READ_STORE,
        input: [AgentRefDto],
        output: AgentDto,
        run: async (args) => {
          const ref = parseInput(AgentRefDto, args);
          await this.access.authorize('get_agent', ref);
          return this.agents.get(ref);
        },
      },
      {
        name: 'get_agent_status',
        title: 'Agent status',
        toolset: 'agents',
        description:
          'Reads the live status of an agent from the cluster (its helm release and the Agent\'s conditions): a verdict ready | progressing | failed | unknown with one sentence saying why, and any drift from the store. Writes nothing.',
        annotations: READ_CLUSTER,
        input: [AgentRefDto],
        output: StatusDto,
        run: async (args) => {
          const ref = parseInput(AgentRefDto, args);
          await this.access.authorize('get_agent_status', ref);
          return this.agents.status(ref, { admin: this.access.isAdmin() });
        },
      },
      {
        name: 'validate_agent',
        title: 'Validate an agent',
        toolset: 'agents',
        description:
          'Checks a create (mode: "create", the default) or an update of an existing agent (mode: "update") without writing anything: answers valid, every violation with its field, non-blocking warnings, and the manifests helm would render. valid: false is an answer, not an error.',
        annotations: READ_STORE,
        input: [ValidateAgentDto],
        output: ValidateResultDto,
        run: async (args) => {
          const command = readValidateCommand(args);
          await this.access.authorizeValidate(command);
          return this.agents.validate(command);
        },
      },
      {
        name: 'create_agent',
        title: 'Create an agent',
        toolset: 'agents',
        description:
          'Writes: installs a new helm release of the Generic agent chart in the namespace, which creates a kagent Agent on the cluster, and records it (revision 1). ' +
          'name (DNS-1123 label, at most 53 characters) is yours to choose; modelConfig and toolset are required. Fails with conflict when the agent exists (use update_agent). ' +
          WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
        input: [CreateAgentDto],
        output: CreateResultDto,
        run: async (args) => {
          const input = parseInput(CreateAgentDto, args);
          await this.access.authorize('create_agent', input);
          return this.agents.create(input);
        },
      },
      {
        name: 'update_agent',
        title: 'Update an agent',
        toolset: 'agents',
        description:
          'Writes: upgrades the agent\'s helm release on the cluster with the fields given (toolset, labels and annotations are replaced whole; fields left out are kept) and records a new revision. An update that changes nothing runs no helm and answers changed: false. ' +
          WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        input: [AgentRefDto, UpdateAgentDto],
        output: UpdateResultDto,
        run: async (args) => {
          const ref = refOf(args);
          await this.access.authorize('update_agent', ref);
          return this.agents.update(ref, commandOf(args, UpdateAgentDto));
        },
      },
      {
        name: 'delete_agent',
        title: 'Delete an agent',
        toolset: 'agents',
        description:
          'Writes: uninstalls the agent\'s helm release, which removes its Agent from the cluster; the record and its revisions are kept in the store as deleted. ' +
          WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
        input: [AgentRefDto, DeleteAgentDto],
        output: DeleteResultDto,
        run: async (args) => {
          const ref = refOf(args);
          await this.access.authorize('delete_agent', ref);
          return this.agents.delete(ref, commandOf(args, DeleteAgentDto));
        },
      },
      {
        name: 'list_agent_revisions',
        title: 'Agent revisions',
        toolset: 'revisions',
        description:
          'Reads every applied change of an agent from the store: revision number, kind, who applied it and when, and the declared fields and chart values of each. ' +
          'With life: "all", also the revisions of earlier agents of the same name that were deleted, each marked with its life. Writes nothing.',
        annotations: READ_STORE,
        input: [AgentRefDto, RevisionsQueryDto],
        output: RevisionListDto,
        run: async (args) => {
          const ref = refOf(args);
          await this.access.authorize('list_agent_revisions', ref);
          return this.agents.revisions(ref, commandOf(args, RevisionsQueryDto));
        },
      },
      {
        name: 'rollback_agent',
        title: 'Roll back an agent',
        toolset: 'revisions',
        description:
          'Writes: restores the values of an earlier revision to the agent\'s helm release on the cluster and records the rollback as a new revision. ' + WRITE_NOTE,
        annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
        input: [AgentRefDto, RollbackAgentDto],
        output: RollbackResultDto,
        run: async (args) => {
          const ref = refOf(args);
          await this.access.authorize('rollback_agent', ref);
          return this.agents.rollback(ref, commandOf(args, RollbackAgentDto));
        },
      },
      {
        name: 'list_operations',
        title: 'Audit trail',
        toolset: 'audit',
        description:
          'Reads the journal newest first: every write and every refusal by authorization, with who (subject, how authenticated, door, MCP client, request id), the operation, the agent and the outcome (pending, succeeded, failed, refused). ' +
          'Filter by subject, namespace, name, operation, outcome and time (since, until); pass nextCursor as cursor for older entries. Writes nothing.',
        annotations: READ_STORE,
        input: [ListOperationsQueryDto],
        output: OperationPageDto,
        run: async (args) => {
          const input = parseInput(ListOperationsQueryDto, args);
          await this.access.authorize('list_operations', { namespace: input.namespace });
          return this.agents.operations(input, { namespacePatterns: this.access.namespacePatterns('list_operations'), reader: this.access.journalReader() });
        },
      },
    ];
  }
}
