import type { Type } from '@nestjs/common';
import type { ToolHints, ToolsetDeclaration } from '@app/mcp';
import type { WriteHeaders } from './write-headers.js';
import type { CallerAccess } from './access.js';

/** What one call brings, whichever door it came through. */
export interface OperationInput {
  /** REST: the path parameters. MCP: the arguments the path DTO names (every argument when the operation reads nothing else). */
  path: Record<string, unknown>;
  /** REST: the JSON body or the query, as sent. MCP: the other arguments. */
  args: unknown;
  /** REST: Idempotency-Key and If-Match, read when asked (a malformed one is refused then). MCP: none; its arguments carry requestId and expectedVersion. */
  headers(): WriteHeaders;
}

/** The namespace (and agent) the policy decides on; without a namespace: "somewhere". */
export interface AccessTarget {
  namespace?: string;
  name?: string;
}

/** How the answer travels back on REST besides its body. */
export interface RestReply {
  status(code: number): void;
  /** The agent's version as its ETag, for If-Match on the next write. */
  etag(agent: { version: number } | null | undefined): void;
  /** Where what was created can be read (202 Accepted's Location). */
  location(path: string): void;
}

/** The REST route of an operation: Nest's route and @nestjs/swagger's documentation of it. */
export interface RestRoute<Answer> {
  /** The OpenAPI tag; one controller per tag serves the routes (restControllers). */
  tag: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** Under the controller's prefix (api/v1). */
  path: string;
  /** The status of a success when it is not Nest's default for the method (@HttpCode). */
  status?: number;
  /**
   * Where the arguments after the path come from; a function for a query that needs converting (it
   * may read the body and headers too: import takes its document as the body, its flags in the query).
   * Without it the route reads only its path.
   */
  args?: 'body' | 'query' | ((query: Record<string, unknown>, request: { body: unknown; header(name: string): string | undefined }) => unknown);
  /**
   * Arguments come from one place only: a body route refuses any query parameter and a query
   * route any body (a misplaced dryRun would be lost and the write would run for real).
   */
  strict?: boolean;
  /** @nestjs/swagger decorators, written as they would stand above a controller method (applied bottom-up, as TypeScript does). */
  openapi: MethodDecorator[];
  /** A status or ETag that depends on the answer; a text returned is the body instead of the answer's JSON (export's YAML). */
  reply?: (answer: NoInfer<Answer>, reply: RestReply, input: OperationInput) => void | { contentType: string; text: string };
}

/** The MCP tool of an operation; its name is the operation's, its arguments the operation's input DTOs. */
export interface ToolDeclaration {
  title: string;
  /** A toolset its module contributes. */
  toolset: string;
  description: string;
  annotations: ToolHints;
  /** The DTO class of the answer (the REST response body). */
  output: Type<unknown>;
  /** The operations the policy grants this tool by, any of them, when more than its own name (get_operation: list_operations too). */
  operations?: string[];
  /** Served as an MCP task when the client asks for one (taskSupport `optional`): a write whose helm run may outlast the call (docs/mcp.md). */
  task?: boolean;
}

/**
 * One operation, declared once: its name (the policy's operation and the MCP tool's name), its
 * REST route, its MCP tool, what the policy decides on, and the call into the service. Both doors
 * run it the same way (OperationDoors): `read` → the policy on `target` (a refusal journaled) →
 * `call` → the answer as the caller may read it.
 */
export interface OperationDescriptor<Service = unknown, Read = unknown, Answer = unknown> {
  name: string;
  /** Absent: an MCP-only operation (`oneDoor` says why). */
  rest?: RestRoute<Answer>;
  /** Absent: a REST-only operation (`oneDoor` says why). */
  tool?: ToolDeclaration;
  /** Why this operation has one door only; required when it has. */
  oneDoor?: string;
  /** The input DTOs: the path's (REST path, named MCP arguments) and the rest's (REST body or query, the other MCP arguments). */
  input: { path?: Type<unknown>; args?: Type<unknown> };
  /** The provider `call` runs on. */
  service: Type<Service>;
  /**
   * What is read before the policy is asked (a request that cannot be read is refused 400 first);
   * a promise when reading needs the store (a blueprint's tool reads the blueprint's active version).
   */
  read(input: OperationInput): Read | Promise<Read>;
  /** What the policy decides on (default: somewhere). */
  target?(read: Read): AccessTarget;
  /** Instead of one check of `name` on `target` (validate_agent also checks the write it stands for). */
  authorize?(access: CallerAccess, read: Read): Promise<void>;
  /** The call into the service, once the policy agreed; reads what remains of the input. */
  call(service: Service, read: Read, input: OperationInput, access: CallerAccess): Promise<Answer>;
  /**
   * What the person at an MCP client that declared elicitation is asked to agree to before its
   * destructive MCP tool runs (after the policy allowed it): one sentence naming the operation, what
   * it acts on and what it does. Undefined: nothing to ask (a dry run). Only tools with
   * destructiveHint ask; declared after `read` so its types are known (docs/mcp.md "Confirming destructive calls").
   */
  confirm?(read: Read, service: Service, input: OperationInput): string | undefined | Promise<string | undefined>;
}

/** A descriptor, typed by its service, what it reads first and its answer. */
export function defineOperation<Service, Read, Answer>(operation: OperationDescriptor<Service, Read, Answer>): OperationDescriptor {
  return operation as unknown as OperationDescriptor;
}

/** The operations a module contributes, and the MCP toolsets their tools belong to. */
export interface OperationSet {
  operations: readonly OperationDescriptor[];
  toolsets: readonly ToolsetDeclaration[];
}

/** The policy's names of operations, in the order they are declared. */
export function operationNames(...sets: OperationSet[]): string[] {
  return sets.flatMap((set) => set.operations.map((operation) => operation.name));
}
