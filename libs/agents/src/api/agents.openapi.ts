import type { Type } from '@nestjs/common';
import { ApiHeader, ApiParam, ApiQuery, ApiResponse, OnOpenApiReplay, type ErrorBody } from '@app/common';
import { AGENT_NAME_SCHEMA, IDEMPOTENCY_KEY_PATTERN, NAMESPACE_SCHEMA, WRITE_EXAMPLE_AGENT } from './requests.dto.js';
import { errorExample, ErrorResponseDto } from '@app/doors';

// The OpenAPI documentation the agent operations share (agents.operations.ts): error answers with examples, headers, path parameters.
const NAME_MESSAGE = 'name must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit, at most 53 characters';
/** The agent the examples name. */
export const AGENT = 'agents/incident-helper';
export const EXAMPLES = {
  invalid: errorExample('invalid_request', NAME_MESSAGE, [{ path: 'name', message: NAME_MESSAGE }]),
  invalidQuery: errorExample('invalid_request', 'limit must be a whole number from 1 to 100', [{ path: 'limit', message: 'limit must be a whole number from 1 to 100' }]),
  invalidActor: errorExample('invalid_request', 'X-Actor must be 1 to 253 printable characters naming who acts (a user or a pipeline), or be left out', [
    { path: 'X-Actor', message: 'X-Actor must be 1 to 253 printable characters naming who acts (a user or a pipeline), or be left out' },
  ]),
  notFound: errorExample('not_found', `agent ${AGENT} does not exist: list agents with GET /api/v1/agents (list_agents) to see what exists`),
  exists: errorExample('conflict', `agent ${AGENT} already exists: update it (PATCH /api/v1/agents/${AGENT}, update_agent) or choose another name`, [
    { path: 'name', message: 'an agent with this name exists in this namespace' },
  ]),
  busy: errorExample('conflict', `agent ${AGENT} has a write in progress (operation c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11 on replica am-0); retry after it finishes`, [
    { path: 'name', message: 'operation c5b1f0e2-7f43-4d8e-9a51-2b7d0c9e4f11 holds this agent until 2026-03-14T09:27:23.000Z unless renewed' },
  ]),
  stale: errorExample(
    'precondition_failed',
    `agent ${AGENT} is at version 4, not 3: read it again (get_agent), re-apply your change to what it holds now, and send version 4`,
    [{ path: 'expectedVersion', message: 'the current version is 4' }],
  ),
  backend: errorExample('backend_error', 'helm install failed: Kubernetes cluster unreachable: Get "https://10.0.0.1:6443/version": dial tcp 10.0.0.1:6443: connect: connection refused'),
  unavailable: errorExample('unavailable', 'agent-manager is shutting down and takes no new writes: retry, another replica will answer'),
};
export const error = (status: number, description: string, example: ErrorBody) => ApiResponse({ status, description, type: ErrorResponseDto, example });
export const invalid = error(400, 'invalid_request: the input is wrong; details name each field', EXAMPLES.invalid);
export const notFound = error(404, 'not_found: no such agent', EXAMPLES.notFound);
export const READ_ERRORS = [invalid, notFound];
export const WRITE_ERRORS = [
  invalid,
  notFound,
  error(
    409,
    'conflict: another write holds the agent, or an Idempotency-Key was reused with another body; gitops_owned: Flux or Argo CD manages the release (docs/contract.md §13), the message names the HelmRelease or Application to change in git instead',
    EXAMPLES.busy,
  ),
  error(412, 'precondition_failed: If-Match names an older version', EXAMPLES.stale),
  error(502, "backend_error: helm or the cluster failed; the message is helm's", EXAMPLES.backend),
  error(503, 'unavailable: this replica is shutting down; another replica answers', EXAMPLES.unavailable),
];
export const CREATE_ERRORS = [
  invalid,
  error(409, 'conflict: the agent exists, a helm release of that name exists, or an Idempotency-Key was reused with another body', EXAMPLES.exists),
  error(502, "backend_error: helm or the cluster failed; the message is helm's", EXAMPLES.backend),
  error(503, 'unavailable: this replica is shutting down; another replica answers', EXAMPLES.unavailable),
];
export const errors = (list: MethodDecorator[]): MethodDecorator => (target, key, descriptor) => {
  for (const decorate of list) decorate(target, key, descriptor);
};
export const writeHeaders = [
  ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'A retry with the same key and body gets the first answer without a second helm run; the same key with another body is refused (409)',
    schema: { type: 'string', pattern: IDEMPOTENCY_KEY_PATTERN, maxLength: 255 },
  }),
  ApiHeader({
    name: 'X-Actor',
    required: false,
    description: 'Who is asking, recorded in revisions and the journal (default "api")',
    schema: { type: 'string', maxLength: 253 },
  }),
];
export const ifMatch = ApiHeader({
  name: 'If-Match',
  required: false,
  description: 'The ETag of the agent, its version in double quotes (e.g. "3", the ETag header of GET): a stale write is refused with 412 naming the current version',
  schema: { type: 'string', pattern: '^\\s*(\\*|(W/)?("\\d{1,10}"|\\d{1,10}))\\s*$' },
});
export const agentPath = [
  ApiParam({ name: 'namespace', description: 'The Kubernetes namespace of the agent', schema: { ...NAMESPACE_SCHEMA } }),
  ApiParam({ name: 'name', description: 'The agent name', schema: { ...AGENT_NAME_SCHEMA } }),
];
/** The path of writes: its example names no agent an example creates, so Execute unchanged changes nothing. */
export const writePath = [
  agentPath[0],
  ApiParam({ name: 'name', description: "The agent name; the example names none: put the agent's", schema: { ...AGENT_NAME_SCHEMA, example: WRITE_EXAMPLE_AGENT } }),
];
/**
 * A query DTO's properties as query parameters with every schema keyword the DTO states
 * (@nestjs/swagger's own flattening of @ApiQuery({type}) drops enum). Made in the OpenAPI
 * replay, after the DTO's own @ApiProperty wrote the metadata it reads.
 */
export function queryOf(dto: Type<unknown>): MethodDecorator {
  return OnOpenApiReplay((target, methodKey, descriptor) => {
    const keys: string[] = Reflect.getMetadata('swagger/apiModelPropertiesArray', dto.prototype) ?? [];
    for (const key of keys) {
      const name = key.replace(/^:/, '');
      const { description, required, type, isArray: _isArray, ...schema } = Reflect.getMetadata('swagger/apiModelProperties', dto.prototype, name) as Record<string, unknown>;
      const typeName = typeof type === 'function' ? type.name.toLowerCase() : type;
      const query = ApiQuery({ name, description, required: required !== false, schema: { type: typeName, ...schema } } as Parameters<typeof ApiQuery>[0]);
      query(target, methodKey, descriptor);
    }
  });
}
export const dryRunBody = (summary: string, value: object) => ({ dryRun: { summary, value } });
