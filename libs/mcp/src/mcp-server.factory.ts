import { Injectable, Logger } from '@nestjs/common';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks/types.js';
import type { CallToolRequest, CallToolResult, ClientCapabilities, LoggingLevel, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { AppConfig, AppError, mapError, OperationContexts, PROJECT_PACKAGE, type ErrorBody, type NewOperationContext } from '@app/common';
import { Authenticator, Authorizer, describePrincipal, toolNotAllowed, type Principal } from '@app/auth';
import { Metrics, newTraceId, parseTraceparent, Tracing } from '@app/telemetry';
import { loadMcpSdk, type McpSdk } from './mcp-sdk.js';
import { McpRegistry } from './mcp.registry.js';
import type { McpTaskStore } from './mcp-tasks.js';
import type { McpDoor, ToolSpec } from './tool-spec.js';
import type { ToolsetSelection } from './toolset-selection.js';

const VERSION = PROJECT_PACKAGE.version ?? '0.0.0';

type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * What a session remembers beyond one HTTP request: over HTTP every request gets a server of its
 * own (any replica may serve it), so what initialize and logging/setLevel said comes from the store.
 */
export interface McpSessionMemory {
  /** The session's id (mcp-session-id): a tool call names it in its context, so a proposal it makes can be told its decision. */
  session?: string;
  /** The client's name from initialize. */
  client?: string;
  /** The logging/setLevel threshold chosen earlier in the session. */
  level?: LoggingLevel;
  /** Keeps a new threshold for the session's later requests. */
  saveLevel?(level: LoggingLevel): Promise<void>;
  /** Whether initialize declared form elicitation (the server of a later HTTP request never saw initialize). */
  elicits?: boolean;
  /** The session's MCP tasks, in the store (Streamable HTTP only): with it the server declares `tasks` and runs task tools as tasks when asked. */
  tasks?: McpTaskStore;
}

/** How long a destructive call waits for its person's answer before it gives up, doing nothing. */
export const CONFIRM_TIMEOUT_MS = 300_000;

/** The form a destructive call's person answers: one box to tick. */
const CONFIRM_FORM = {
  type: 'object',
  properties: { confirm: { type: 'boolean', title: 'Go ahead', description: 'Tick to let the call do what the message says', default: false } },
  required: ['confirm'],
} as const;

/**
 * Builds the MCP server of one session (the stdio process), or of one request of an HTTP session.
 * The session keeps what its URL (or --toolsets) selected; the tools it lists are the registry's current ones.
 */
@Injectable()
export class McpServerFactory {
  private readonly logger = new Logger('MCP');

  constructor(
    private readonly registry: McpRegistry,
    private readonly authorizer: Authorizer,
    private readonly authenticator: Authenticator,
    private readonly metrics: Metrics,
    private readonly config: AppConfig,
  ) {}

  /**
   * `principal`: who the session serves. Layer 1 (the toolsets of the URL or --toolsets) and
   * layer 2 (the tools the policy grants the principal in at least one namespace) both decide:
   * tools/list shows what passes both, and a call to a listed-by-layer-1 tool that layer 2 blocks
   * answers tool_not_allowed with the session's allowed tools.
   */
  async create(selection: ToolsetSelection, door: McpDoor, principal: Principal, memory: McpSessionMemory = {}): Promise<Server> {
    const registry = this.registry;
    const allowed = (specs: ToolSpec[]) => specs.filter((spec) => this.permitsTool(principal, spec));
    const { Server, types, jsonSchemaValidator } = await loadMcpSdk();
    const { CallToolRequestSchema, ListToolsRequestSchema, SetLevelRequestSchema } = types;
    const SEVERITY = types.LoggingLevelSchema.options;
    const { tasks } = memory;
    // tasks: tools/call may be asked for a task (the tools whose execution.taskSupport says so); tasks/get, tasks/result and tasks/list are the SDK's, served from the session's tasks in the store
    const taskCapability = tasks && { tasks: { list: {}, requests: { tools: { call: {} } } } };
    const server = new Server(
      { name: 'agent-manager', title: 'agent-manager', version: VERSION },
      { capabilities: { tools: { listChanged: true }, ...taskCapability }, instructions: registry.instructions(registry.resolve(selection)), jsonSchemaValidator, ...(tasks && { taskStore: tasks }) },
    );
    // Registered after construction so this session's level is ours to read (the SDK keeps its own private).
    server.registerCapabilities({ logging: {} });
    let threshold: LoggingLevel = memory.level ?? 'debug';
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      threshold = request.params.level;
      await memory.saveLevel?.(threshold);
      return {};
    });

    const unsubscribe = registry.onChange(() => {
      server.sendToolListChanged().catch((error: unknown) => this.logger.debug(`tools/list_changed not sent: ${(error as Error).message}`));
    });
    const closed = server.onclose;
    server.onclose = () => {
      unsubscribe();
      closed?.();
    };
    // A server closed before it was connected (its client left first) never hears onclose.
    const close = server.close.bind(server);
    server.close = async () => {
      unsubscribe();
      await close();
    };

    server.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const page = registry.page(allowed(registry.specsFor(registry.resolve(selection))), request.params?.cursor);
      if (!page) throw new types.McpError(types.ErrorCode.InvalidParams, 'cursor is not one this server issued: pass nextCursor from the previous tools/list answer, or omit it');
      const tools = await registry.describe(page.specs);
      return page.nextCursor ? { tools, nextCursor: page.nextCursor } : { tools };
    });

    const call = async (request: CallToolRequest, extra: RequestExtra): Promise<CallToolResult | CreateTaskResult> => {
      if (request.params.task === undefined) return answer(request, extra);
      const { name } = request.params;
      if (!registry.find(name, registry.resolve(selection))?.task || !tasks) {
        throw new types.McpError(types.ErrorCode.MethodNotFound, `${name} is not run as a task: call it without "task" (tools/list marks the tools that can be with execution.taskSupport)`);
      }
      return this.asTask(tasks, name, () => answer(request, extra));
    };

    const answer = async (request: CallToolRequest, extra: RequestExtra): Promise<CallToolResult> => {
      const { name } = request.params;
      const toolsets = registry.resolve(selection);
      const spec = registry.find(name, toolsets);
      // what the session may call, named only in a refusal
      const permitted = () => allowed(registry.specsFor(toolsets));
      if (!spec) return errorResult(this.noSuchTool(name, permitted(), door));
      if (!this.permitsTool(principal, spec)) {
        this.logger.log(`${describePrincipal(principal)}: ${toolNotAllowed(name, [])}`);
        return textError(toolNotAllowed(name, permitted().map((s) => s.name)));
      }
      const args = request.params.arguments ?? {};
      const log = async (level: LoggingLevel, data: string): Promise<void> => {
        if (SEVERITY.indexOf(level) < SEVERITY.indexOf(threshold)) return;
        // A client that left (or a task whose call was answered already) is not told: the write goes on.
        await extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'agent-manager', data } }).catch((error: unknown) => {
          this.logger.debug(`${name}: progress not sent: ${(error as Error).message}`);
        });
      };
      const writes = !spec.annotations.readOnlyHint && args.dryRun !== true;
      const target = typeof args.namespace === 'string' && typeof args.name === 'string' ? ` ${args.namespace}/${args.name}` : '';
      // A destructive write asks the client's person first, once the policy allowed it (OperationDoors), when the client can be asked.
      const asks = writes && spec.annotations.destructiveHint && this.config.MCP_CONFIRM_DESTRUCTIVE && (formElicitation(server.getClientCapabilities()) ?? memory.elicits === true);
      const run = () => spec.run(args, { toolsets, door });
      const confirming = () => (asks ? OperationContexts.withConfirmation((summary) => this.ask(extra, types, `${name}${target}`, summary), run) : run());
      try {
        if (writes) await log('info', `${name}${target}: started: checking the request`);
        // Only a write that passed its checks runs helm; the pipeline says which helm step when it does.
        const step = (message: string) => log('info', `${name}${target}: ${message} (this can take a while)`);
        const result = await (writes ? OperationContexts.withProgress(step, confirming) : run());
        if (writes) await log('info', `${name}${target}: done`);
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result as Record<string, unknown> };
      } catch (error) {
        const mapped = mapError(error);
        if (mapped.unexpected) {
          this.logger.error(`errorId=${mapped.body.error.errorId} ${name}: ${(mapped.unexpected as Error)?.stack ?? String(mapped.unexpected)}`);
        }
        if (writes) await log('error', `${name}${target} failed: ${mapped.body.error.message}`);
        return errorResult(mapped.body);
      }
    };

    server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult | CreateTaskResult> => {
      const { name } = request.params;
      const client = server.getClientVersion()?.name ?? memory.client;
      const actor = this.authenticator.enabled ? principal.subject : actorOf(client);
      const known = registry.find(name, registry.resolve(selection)) !== undefined;
      return this.observed({ name, known, args: request.params.arguments ?? {}, meta: request.params._meta }, { door, actor, client, principal, ...(memory.session !== undefined && { mcpSession: memory.session }) }, () => call(request, extra));
    });
    return server;
  }

  /**
   * A tool call asked for as a task: answered with the task once its write journaled its intent (the
   * task's id is the journal entry's) or, when it ended without one (refused, proposed, unchanged,
   * a dry run), once it ended; a destructive call asks its person before that, on the call's own
   * stream. The write goes on after the answer, and its answer becomes the task's result.
   */
  private async asTask(tasks: McpTaskStore, call: string, answer: () => Promise<CallToolResult>): Promise<CreateTaskResult> {
    let journaled: (operationId: string | undefined) => void = () => undefined;
    const started = new Promise<string | undefined>((resolve) => (journaled = resolve));
    const outcome = OperationContexts.withJournaled((operationId) => journaled(operationId), answer).catch(
      (error: unknown): CallToolResult => errorResult(mapError(error).body),
    );
    void outcome.then(() => journaled(undefined));
    const task = await tasks.begin(await started);
    void outcome
      .then((result) => tasks.finish(task.taskId, result))
      .catch((error: unknown) => this.logger.warn(`${call}: storing the result of task ${task.taskId} failed; tasks/get follows its journal entry: ${(error as Error).message}`));
    return { task };
  }

  /**
   * A tool call in its operation context, its span (child of the HTTP request's, or of the
   * caller's `_meta.traceparent`), one access line and its metrics. An unknown tool is counted
   * as `unknown`: label values stay the set of tools served.
   */
  private async observed(
    call: { name: string; known: boolean; args: Record<string, unknown>; meta?: Record<string, unknown> },
    caller: Omit<NewOperationContext, 'facts' | 'traceId'>,
    answer: () => Promise<CallToolResult | CreateTaskResult>,
  ): Promise<CallToolResult | CreateTaskResult> {
    const tool = call.known ? call.name : 'unknown';
    const started = process.hrtime.bigint();
    const parent = call.meta?.traceparent;
    const span = Tracing.begin(`tools/call ${tool}`, { kind: 'server', parent, attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': tool } });
    const traceId = span?.traceId ?? parseTraceparent(parent)?.traceId ?? OperationContexts.active()?.traceId ?? newTraceId();
    const { namespace, name } = call.args;
    const agent = typeof namespace === 'string' && typeof name === 'string' ? `${namespace}/${name}` : undefined;
    const facts = { subject: caller.principal?.subject, operation: call.name, agent };
    return OperationContexts.run({ ...caller, traceId, facts }, async () => {
      let outcome = 'internal';
      try {
        const result = await (span ? span.run(answer) : answer());
        outcome = 'isError' in result && result.isError ? ((result.structuredContent as Partial<ErrorBody> | undefined)?.error?.code ?? 'error') : 'ok';
        return result;
      } finally {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        this.metrics.toolCall(tool, outcome, seconds);
        span?.set({ 'mcp.tool.outcome': outcome });
        span?.end(outcome === 'ok' ? undefined : outcome);
        this.logger.log({ msg: `tool call ${tool}: ${outcome}`, tool, outcome, durationMs: Math.round(seconds * 10_000) / 10 });
      }
    });
  }

  /**
   * Asks the person at the client (form elicitation on the tool call's own stream) to agree to
   * `summary`; resolves on accept with the box ticked, and otherwise throws the refusal the call
   * answers, which says nothing was done. No answer within CONFIRM_TIMEOUT_MS counts as no.
   */
  private async ask(extra: RequestExtra, types: McpSdk['types'], call: string, summary: string): Promise<void> {
    let answer: { action: string; content?: Record<string, unknown> };
    try {
      answer = await extra.sendRequest(
        { method: 'elicitation/create', params: { mode: 'form', message: `${summary} Go ahead?`, requestedSchema: { ...CONFIRM_FORM, required: [...CONFIRM_FORM.required] } } },
        types.ElicitResultSchema,
        { timeout: CONFIRM_TIMEOUT_MS },
      );
    } catch (error) {
      throw new AppError('forbidden', `${call} was not done: asking the person at the MCP client to confirm it failed, or found no answer within ${CONFIRM_TIMEOUT_MS / 60_000} minutes (${(error as Error).message}); call it again to be asked again`);
    }
    if (answer.action === 'accept' && answer.content?.confirm !== false) return;
    const how = answer.action === 'accept' ? 'did not tick "Go ahead" for' : answer.action === 'decline' ? 'declined' : 'cancelled';
    this.logger.log(`${call}: the person at the client ${how} it; nothing was done`);
    throw new AppError('forbidden', `the person at the MCP client ${how} ${call}: nothing was done. Ask them before calling it again, or call it with dryRun: true to show what it would do`);
  }

  /**
   * Layer 2 for one tool. A tool added at run time after the policy was read (not among its
   * operations, so no role can name it) is served to admins only (granted `*` in `*`): fail closed.
   */
  private permits(principal: Principal, name: string): boolean {
    const known = this.authorizer.operations;
    if (this.authorizer.knows(name)) return this.authorizer.isAllowed(principal, name);
    return known.every((operation) => this.authorizer.namespacesFor(principal, operation).all);
  }

  /** Layer 2 for a tool the policy knows by other operations (a blueprint's): any of them grants it. */
  private permitsTool(principal: Principal, spec: ToolSpec): boolean {
    return (spec.operations ?? [spec.name]).some((operation) => this.permits(principal, operation));
  }

  private noSuchTool(name: string, specs: ToolSpec[], door: McpDoor): ErrorBody {
    const other = door === 'mcp-stdio' ? 'which toolsets --toolsets can add' : 'which toolsets another connection URL can add';
    return new AppError('not_found', `no tool named ${name} in this session: the tools are ${specs.map((s) => s.name).join(', ')}; list_server_toolsets tells ${other}`).toBody();
  }
}

/** docs/contract.md §6 on the MCP door: isError with the error object, and its message and details as text. */
function errorResult(body: ErrorBody): CallToolResult {
  const { message, details } = body.error;
  const lines = details.filter((d) => d.message !== message).map((d) => `- ${d.path || '(arguments)'}: ${d.message}`);
  return {
    isError: true,
    content: [{ type: 'text', text: [message, ...lines].join('\n') }],
    structuredContent: { ...body },
  };
}

/** Layer 2's refusal: its own text, in the error model as forbidden (a tool outside the allowed set). */
function textError(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }], structuredContent: { ...new AppError('forbidden', text).toBody() } };
}

/**
 * Whether a client's capabilities (from initialize) include form elicitation: `elicitation: {}`
 * (before 2025-11-25: forms only) or `elicitation.form`; undefined when the server never saw initialize.
 */
export function formElicitation(capabilities: ClientCapabilities | undefined): boolean | undefined {
  if (!capabilities) return undefined;
  const elicitation = capabilities.elicitation as { form?: object; url?: object } | undefined;
  if (!elicitation) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** Who acts, as the transport knows it: the client's name from initialize, unchecked (a domain records it by its own rule). */
function actorOf(client: string | undefined): string {
  return client ? `mcp:${client}` : 'mcp';
}
