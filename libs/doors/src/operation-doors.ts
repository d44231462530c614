import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Caller, OperationContexts } from '@app/common';
import { McpRegistry, type ToolSpec } from '@app/mcp';
import { recordableActor } from './actor.js';
import { acceptedFields } from './input.js';
import { AgentAccess } from './access.js';
import { answerForCaller, forCaller } from './redaction.js';
import type { OperationDescriptor, OperationInput, OperationSet } from './operation.js';

/**
 * The one wrapper both doors run an operation through (MCP-Nest's per-tool guard, immich's
 * @Authenticated({ permission })): read what the policy needs → the policy (a refusal journaled
 * and answered 403) → the service call → the answer, and any backend_error, as the caller may
 * read them (helm's own words reach admins only). The REST door (rest-door.ts) and the MCP tools
 * built here differ only in where the input comes from.
 */
@Injectable()
export class OperationDoors {
  private readonly contributed = new Map<string, OperationDescriptor>();

  constructor(
    private readonly access: AgentAccess,
    private readonly modules: ModuleRef,
    private readonly registry: McpRegistry,
  ) {}

  /**
   * One call of `operation`, whichever door it came through. The caller is made a value here, once,
   * from what the door verified (its operation context): the policy, the service and the write
   * runner are given it; nothing below reads who calls from the context.
   */
  async run(operation: OperationDescriptor, input: OperationInput): Promise<unknown> {
    const access = this.access.for(Caller.current());
    try {
      const read = await operation.read(input);
      if (operation.authorize) await operation.authorize(access, read);
      else await access.authorize(operation.name, operation.target?.(read) ?? {});
      const service = this.modules.get(operation.service, { strict: false });
      await this.confirmed(operation, read, service, input);
      return answerForCaller(await operation.call(service, read, input, access), access.isAdmin());
    } catch (error) {
      throw forCaller(error, access.isAdmin());
    }
  }

  /** Asks the caller's person, when the call can ask and the tool declares what to ask, before anything is done. */
  private async confirmed(operation: OperationDescriptor, read: unknown, service: unknown, input: OperationInput): Promise<void> {
    if (!operation.confirm || !operation.tool?.annotations.destructiveHint || !OperationContexts.asks()) return;
    const summary = await operation.confirm(read, service, input);
    if (summary !== undefined) await OperationContexts.confirm(summary);
  }

  /** A module's operations: their MCP toolsets and tools into the registry (their REST routes are its controllers). */
  contribute(set: OperationSet): void {
    for (const toolset of set.toolsets) this.registry.addToolset(toolset);
    for (const operation of set.operations) this.contributed.set(operation.name, operation);
    this.registry.addTools(set.operations.filter((operation) => operation.tool).map((operation) => this.toolOf(operation)));
  }

  /** Takes a module's tools and toolsets out of the registry again. */
  withdraw(set: OperationSet): void {
    this.registry.removeTools(set.operations.map((operation) => operation.name));
    for (const toolset of set.toolsets) this.registry.removeToolset(toolset.name);
    for (const operation of set.operations) this.contributed.delete(operation.name);
  }

  /** Every operation contributed, in the order contributed. */
  operations(): OperationDescriptor[] {
    return [...this.contributed.values()];
  }

  /**
   * A tool made at run time rather than declared in a set (a blueprint's, one per blueprint): its
   * listing as given (its schema made at run time), its call `operation`, run as every declared
   * tool's is (`run`: read → the policy → the call → the answer as the caller may read it).
   */
  dynamicTool(spec: Omit<ToolSpec, 'run'>, operation: OperationDescriptor): ToolSpec {
    return this.asMcpCaller({ ...spec, run: async (args) => (await this.run(operation, mcpInput(operation, args))) as object });
  }

  private toolOf(operation: OperationDescriptor): ToolSpec {
    const { tool, input } = operation;
    if (!tool) throw new Error(`operation ${operation.name} has no MCP tool`);
    return this.asMcpCaller({
      name: operation.name,
      title: tool.title,
      toolset: tool.toolset,
      description: tool.description,
      annotations: tool.annotations,
      input: [input.path, input.args].filter((dto) => dto !== undefined),
      output: tool.output,
      ...(tool.operations ? { operations: [operation.name, ...tool.operations] } : {}),
      ...(tool.task && { task: true }),
      run: async (args) => (await this.run(operation, mcpInput(operation, args))) as object,
    });
  }

  /** The MCP client's name made recordable by the journal's actor rule (the REST door refuses what X-Actor breaks it). */
  private asMcpCaller(spec: ToolSpec): ToolSpec {
    return {
      ...spec,
      run: (args, context) => {
        const current = OperationContexts.current();
        const client = current.client === undefined ? undefined : recordableActor(current.client);
        return OperationContexts.run({ ...current, actor: recordableActor(current.actor), client }, () => spec.run(args, context));
      },
    };
  }
}

/**
 * A tool call's arguments as the operation's input: the fields of the path DTO (REST's path) are
 * the path, the others what REST reads from the body or query. An operation that reads nothing
 * but its path gets every argument there, so an argument it does not take is refused by name.
 */
function mcpInput(operation: OperationDescriptor, args: Record<string, unknown>): OperationInput {
  const headers = () => ({});
  const { path, args: rest } = operation.input;
  if (!path) return { path: {}, args, headers };
  if (!rest) return { path: args, args: undefined, headers };
  const keys = acceptedFields(path);
  const named = Object.fromEntries(keys.map((key) => [key, args[key]]));
  const others = Object.fromEntries(Object.entries(args).filter(([key]) => !keys.includes(key)));
  return { path: named, args: others, headers };
}
