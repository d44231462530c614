import { Injectable } from '@nestjs/common';
import {
  AgentDto,
  AgentPageDto,
  AgentRefDto,
  AgentsService,
  CreateAgentDto,
  CreateResultDto,
  DeleteAgentDto,
  DeleteResultDto,
  InfoDto,
  ListAgentsQueryDto,
  RevisionListDto,
  RollbackAgentDto,
  RollbackResultDto,
  ServiceInfoService,
  StatusDto,
  UpdateAgentDto,
  UpdateResultDto,
  ValidateAgentDto,
  ValidateResultDto,
  parseInput,
  readValidateCommand,
} from '@app/agents';
import type { ToolHints, ToolSpec } from './tool-spec.js';

const READ_STORE: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const READ_CLUSTER: ToolHints = { ...READ_STORE, openWorldHint: true };

const WRITE_NOTE = 'With dryRun: true it answers as the write would and changes nothing.';

/** The REST path's {namespace, name} and the body's command, from one argument object. */
function split<T extends object>(args: Record<string, unknown>, command: new () => T): [AgentRefDto, T] {
  const { namespace, name, ...body } = args;
  return [parseInput(AgentRefDto, { namespace, name }), parseInput(command, body)];
}

/** The agent operations of SPEC §3 as MCP tools, over AgentsService and ServiceInfoService. */
@Injectable()
export class AgentsTools {
  constructor(
    private readonly agents: AgentsService,
    private readonly serviceInfo: ServiceInfoService,
  ) {}

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
        run: () => this.serviceInfo.info(),
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
        run: (args) => this.agents.list(parseInput(ListAgentsQueryDto, args)),
      },
      {
        name: 'get_agent',
        title: 'Get an agent',
        toolset: 'agents',
        description:
          'Reads one agent from the store: its declared fields, the chart values applied, its toolset exactly as written, its revision, and its last operation (a failed write shows here with helm\'s message). Writes nothing.',
        annotations: READ_STORE,
        input: [AgentRefDto],
        output: AgentDto,
        run: (args) => this.agents.get(parseInput(AgentRefDto, args)),
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
        run: (args) => this.agents.status(parseInput(AgentRefDto, args)),
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
        run: (args) => this.agents.validate(readValidateCommand(args)),
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
        run: (args) => this.agents.create(parseInput(CreateAgentDto, args)),
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
        run: (args) => this.agents.update(...split(args, UpdateAgentDto)),
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
        run: (args) => this.agents.delete(...split(args, DeleteAgentDto)),
      },
      {
        name: 'list_agent_revisions',
        title: 'Agent revisions',
        toolset: 'revisions',
        description: 'Reads every applied change of an agent from the store: revision number, kind, who applied it and when, and the declared fields and chart values of each. Writes nothing.',
        annotations: READ_STORE,
        input: [AgentRefDto],
        output: RevisionListDto,
        run: (args) => this.agents.revisions(parseInput(AgentRefDto, args)),
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
        run: (args) => this.agents.rollback(...split(args, RollbackAgentDto)),
      },
    ];
  }
}
