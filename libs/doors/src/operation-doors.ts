import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Caller, OperationContexts } from '@app/common';
import { McpRegistry, type ToolSpec } from '@app/mcp';
import { recordableActor } from './actor.js';
import type { Type } from '@nestjs/common';
import { acceptedFields, parseInput } from './input.js';
import { foldWriteHeaders, type WriteCommand } from './write-headers.js';
import { AgentAccess } from './access.js';
import { answerForCaller, forCaller } from './redaction.js';
import type { AccessTarget, OperationDescriptor, OperationInput, OperationInputs, OperationSet, TargetOf } from './operation.js';

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
   * runner are given it; nothing below reads who calls from the context. What the descriptor
   * declares as data (its input DTOs, target, write headers) is read here, so the one call into
   * the operation's own file is `call` (and a `read`, `target`, `authorize` or `confirm` that
   * computes).
   */
  async run(operation: OperationDescriptor, input: OperationInput): Promise<unknown> {
    const access = this.access.for(Caller.current());
    try {
      const read = operation.read ? await operation.read(input) : readDeclared(operation.input, input);
      if (operation.authorize) await operation.authorize(access, read);
      else await access.authorize(operation.name, targetOf(operation.target, read));
      const service = this.modules.get(operation.service, { strict: false });
      await this.confirmed(operation, read, service, input);
      const command = operation.read ? undefined : commandDeclared(operation.input, input);
      const written = (command ?? read) as WriteCommand;
      if (operation.writeHeaders) Object.assign(written, foldWriteHeaders({ requestId: written.requestId, expectedVersion: written.expectedVersion }, input.headers, operation.writeHeaders));
      return answerForCaller(await operation.call(service, read, command, access), access.isAdmin());
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
 * No write headers: the arguments carry requestId and expectedVersion.
 */
function mcpInput(operation: OperationDescriptor, args: Record<string, unknown>): OperationInput {
  const { path, args: rest } = operation.input;
  if (!path) return { path: {}, args };
  if (!rest) return { path: args, args: undefined };
  const keys = acceptedFields(path);
  const named = Object.fromEntries(keys.map((key) => [key, args[key]]));
  const others = Object.fromEntries(Object.entries(args).filter(([key]) => !keys.includes(key)));
  return { path: named, args: others };
}

/** What an operation without `read` reads before the policy: its path DTO, else its args DTO, else nothing. */
function readDeclared(inputs: OperationInputs, input: OperationInput): unknown {
  if (inputs.path) return parseInput(inputs.path as Type<object>, input.path);
  if (inputs.args) return parseInput(inputs.args as Type<object>, input.args ?? {});
  return undefined;
}

/** What an operation without `read` reads once the policy agreed: the args DTO of one that also has a path (an update's fields). */
function commandDeclared(inputs: OperationInputs, input: OperationInput): unknown {
  return inputs.path && inputs.args ? parseInput(inputs.args as Type<object>, input.args ?? {}) : undefined;
}

/** The policy's target, from what the descriptor declares (TargetOf) and what was read. */
function targetOf(target: TargetOf<unknown> | undefined, read: unknown): AccessTarget {
  if (target === undefined) return {};
  if (typeof target === 'function') return target(read);
  if (target === 'read' || target === 'namespace') {
    const { namespace, name } = (read ?? {}) as AccessTarget;
    return target === 'read' ? { namespace, name } : { namespace };
  }
  return target;
}
