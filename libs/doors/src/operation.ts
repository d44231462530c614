import type { Type } from '@nestjs/common';
import type { ToolHints, ToolsetDeclaration } from '@app/mcp';
import type { RawWriteHeaders, WriteHeaders } from './write-headers.js';
import type { RestReply } from './replies.js';
import type { CallerAccess } from './access.js';

/** What one call brings, whichever door it came through: data only, read by OperationDoors. */
export interface OperationInput {
  /** REST: the path parameters. MCP: the arguments the path DTO names (every argument when the operation reads nothing else). */
  path: Record<string, unknown>;
  /** REST: the JSON body or the query, as sent. MCP: the other arguments. */
  args: unknown;
  /**
   * REST: Idempotency-Key and If-Match as sent, unparsed (OperationDoors parses them once the
   * policy agreed, for an operation that declares `writeHeaders`). MCP: none; its arguments carry
   * requestId and expectedVersion.
   */
  headers?: RawWriteHeaders;
}

/** The namespace (and agent) the policy decides on; without a namespace: "somewhere". */
export interface AccessTarget {
  namespace?: string;
  name?: string;
}

/**
 * What the policy decides on, as data where it can be: `'read'`, the namespace and name of what
 * was read (an agent's ref, a create's body); `'namespace'`, its namespace only (a list's filter);
 * a constant (`{ namespace: '*' }`: granted on every namespace); a function only for a target
 * computed from what was read. Absent: somewhere.
 */
export type TargetOf<Read> = 'read' | 'namespace' | AccessTarget | ((read: Read) => AccessTarget);

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
   * may read the body and the request's headers, as data, too: import takes its document as the
   * body, its flags in the query; export its format from Accept).
   * Without it the route reads only its path.
   */
  args?: 'body' | 'query' | ((query: Record<string, unknown>, request: { body: unknown; headers: Record<string, string | string[] | undefined> }) => unknown);
  /**
   * Arguments come from one place only: a body route refuses any query parameter and a query
   * route any body (a misplaced dryRun would be lost and the write would run for real).
   */
  strict?: boolean;
  /** @nestjs/swagger decorators, written as they would stand above a controller method (applied bottom-up, as TypeScript does). */
  openapi: MethodDecorator[];
  /**
   * A status, ETag or Location that depends on the answer, or a text to send instead of the
   * answer's JSON (export's YAML): a pure function whose data the REST door applies. Most routes
   * name a shared shape of replies.ts (`replies.created`, `replies.written`, …).
   */
  // A method, so a shared shape typed by what it reads of the answer fits any answer that has it.
  reply?(answer: NoInfer<Answer>, input: OperationInput): RestReply;
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
 * The input DTOs: the path's (REST path, named MCP arguments) and the rest's (REST body or query,
 * the other MCP arguments).
 */
export interface OperationInputs<Path = unknown, Args = unknown> {
  path?: Type<Path>;
  args?: Type<Args>;
}

/**
 * What every descriptor declares besides its input and how it is read: `Read` is what the policy
 * decides on, `Command` the arguments read after the policy agreed (undefined when there are none).
 */
interface OperationBase<Service, Read, Command, Answer> {
  name: string;
  /** Absent: an MCP-only operation (`oneDoor` says why). */
  rest?: RestRoute<Answer>;
  /** Absent: a REST-only operation (`oneDoor` says why). */
  tool?: ToolDeclaration;
  /** Why this operation has one door only; required when it has. */
  oneDoor?: string;
  /** The provider `call` runs on. */
  service: Type<Service>;
  /** What the policy decides on (default: somewhere); see TargetOf. */
  target?: TargetOf<NoInfer<Read>>;
  /** Instead of one check of `name` on `target` (validate_agent also checks the write it stands for). */
  authorize?(access: CallerAccess, read: Read): Promise<void>;
  /**
   * The write headers the call takes (REST's Idempotency-Key as requestId, If-Match as
   * expectedVersion): parsed once the policy agreed (a malformed one refused 400, every write
   * header parsed whichever it takes, as a write always has) and folded into the command (else
   * into what was read) before `call`: foldWriteHeaders, write-headers.ts.
   */
  writeHeaders?: readonly (keyof WriteHeaders)[];
  /** The call into the service, once the policy agreed: what was read, and the command read after the policy (write headers folded in). */
  call(service: Service, read: Read, command: Command, access: CallerAccess): Promise<Answer>;
  /**
   * What the person at an MCP client that declared elicitation is asked to agree to before its
   * destructive MCP tool runs (after the policy allowed it): one sentence naming the operation, what
   * it acts on and what it does. Undefined: nothing to ask (a dry run). Only tools with
   * destructiveHint ask; declared after `read` so its types are known (docs/mcp.md "Confirming destructive calls").
   */
  confirm?(read: Read, service: Service, input: OperationInput): string | undefined | Promise<string | undefined>;
}

/**
 * One operation, declared once: its name (the policy's operation and the MCP tool's name), its
 * REST route, its MCP tool, what the policy decides on, and the call into the service. Both doors
 * run it the same way (OperationDoors): read → the policy on `target` (a refusal journaled) → the
 * command and write headers → `call` → the answer as the caller may read it. Everything but `call`
 * (and the odd computed `read`, `target`, `authorize` or `confirm`) is data OperationDoors reads.
 */
export interface OperationDescriptor<Service = unknown, Read = unknown, Answer = unknown, Command = unknown> extends OperationBase<Service, Read, Command, Answer> {
  input: OperationInputs;
  /**
   * What is read before the policy is asked, when the declared DTOs do not say it (ReadOf says
   * what they read without it); a promise when reading needs the store (a blueprint's tool reads the
   * blueprint's active version). A request that cannot be read is refused 400 first.
   */
  read?(input: OperationInput): Read | Promise<Read>;
}

/**
 * What the declared DTOs read when an operation has no `read`: before the policy, the path DTO
 * (the agent, change or rollout it acts on), else the args DTO, else nothing; after it, the args
 * DTO of an operation that also has a path (the command: an update's fields). An operation with a
 * `read` of its own has no command.
 */
export type ReadOf<Path, Args> = unknown extends Path ? (unknown extends Args ? undefined : Args) : Path;
// The type tells an own `read` by what it reads: one that reads just the path DTO would be typed with a command it does not get.
export type CommandOf<Path, Args, Read> = [Read] extends [ReadOf<Path, Args>] ? (unknown extends Path ? undefined : unknown extends Args ? undefined : Args) : undefined;

/**
 * A descriptor, typed by its service, its input DTOs, what it reads (its `read`, else what its
 * DTOs read: ReadOf), its answer and its command (CommandOf).
 */
export function defineOperation<Service, Path = unknown, Args = unknown, Read = ReadOf<Path, Args>, Answer = unknown, Command = CommandOf<Path, Args, Read>>(
  operation: OperationDescriptor<Service, Read, Answer, Command> & { input: OperationInputs<Path, Args> },
): OperationDescriptor {
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
