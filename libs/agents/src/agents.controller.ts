import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Injectable,
  Param,
  Patch,
  Post,
  Query,
  Req,
  Res,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
  type Type,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { catchError, map, Observable, throwError } from 'rxjs';
import { Authenticator, Authorizer } from '@app/auth';
import {
  ApiBody,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiResponse,
  ApiTags,
  AppError,
  OnOpenApiReplay,
  OperationContexts,
  type ErrorBody,
  type NewOperationContext,
} from '@app/common';
import {
  AGENT_NAME_SCHEMA,
  AgentRefDto,
  CreateAgentDto,
  DeleteAgentDto,
  ListAgentsQueryDto,
  ListOperationsQueryDto,
  IDEMPOTENCY_KEY_PATTERN,
  NAMESPACE_SCHEMA,
  REQUEST_EXAMPLES,
  RevisionsQueryDto,
  WRITE_EXAMPLE_AGENT,
  RollbackAgentDto,
  UpdateAgentDto,
  ValidateAgentDto,
} from './agents.dto.js';
import { readValidateCommand, withWriteHeaders, type WriteHeaders } from './agents.commands.js';
import { parseInput } from './agents.input.js';
import {
  AgentDto,
  AgentPageDto,
  CreateDryRunDto,
  CreatedAgentDto,
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
import { isRecordableActor } from './actor.js';
import { answerForCaller, forCaller, isAdmin } from './audit/backend-errors.js';
import { AgentsRepository } from './agents.repository.js';
import { AgentsService } from './agents.service.js';
import { AgentAccess } from './audit/agent-access.js';
import { errorExample, ErrorResponseDto } from './error-response.dto.js';
import { ServiceInfoService } from './service-info.service.js';

const NAME_MESSAGE = 'name must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit, at most 53 characters';
const AGENT = 'agents/incident-helper';
const EXAMPLES = {
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
const error = (status: number, description: string, example: ErrorBody) => ApiResponse({ status, description, type: ErrorResponseDto, example });
const invalid = error(400, 'invalid_request: the input is wrong; details name each field', EXAMPLES.invalid);
const notFound = error(404, 'not_found: no such agent', EXAMPLES.notFound);
const READ_ERRORS = [invalid, notFound];
const WRITE_ERRORS = [
  invalid,
  notFound,
  error(409, 'conflict: another write holds the agent, or an Idempotency-Key was reused with another body', EXAMPLES.busy),
  error(412, 'precondition_failed: If-Match names an older version', EXAMPLES.stale),
  error(502, "backend_error: helm or the cluster failed; the message is helm's", EXAMPLES.backend),
  error(503, 'unavailable: this replica is shutting down; another replica answers', EXAMPLES.unavailable),
];
const CREATE_ERRORS = [
  invalid,
  error(409, 'conflict: the agent exists, a helm release of that name exists, or an Idempotency-Key was reused with another body', EXAMPLES.exists),
  error(502, "backend_error: helm or the cluster failed; the message is helm's", EXAMPLES.backend),
  error(503, 'unavailable: this replica is shutting down; another replica answers', EXAMPLES.unavailable),
];
const errors = (list: MethodDecorator[]): MethodDecorator => (target, key, descriptor) => {
  for (const decorate of list) decorate(target, key, descriptor);
};
const writeHeaders = [
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
const ifMatch = ApiHeader({
  name: 'If-Match',
  required: false,
  description: 'The ETag of the agent, its version in double quotes (e.g. "3", the ETag header of GET): a stale write is refused with 412 naming the current version',
  schema: { type: 'string', pattern: '^\\s*(\\*|(W/)?("\\d{1,10}"|\\d{1,10}))\\s*$' },
});
const agentPath = [
  ApiParam({ name: 'namespace', description: 'The Kubernetes namespace of the agent', schema: { ...NAMESPACE_SCHEMA } }),
  ApiParam({ name: 'name', description: 'The agent name', schema: { ...AGENT_NAME_SCHEMA } }),
];
/** The path of writes: its example names no agent an example creates, so Execute unchanged changes nothing. */
const writePath = [
  agentPath[0],
  ApiParam({ name: 'name', description: "The agent name; the example names none: put the agent's", schema: { ...AGENT_NAME_SCHEMA, example: WRITE_EXAMPLE_AGENT } }),
];
/**
 * A query DTO's properties as query parameters with every schema keyword the DTO states
 * (@nestjs/swagger's own flattening of @ApiQuery({type}) drops enum). Made in the OpenAPI
 * replay, after the DTO's own @ApiProperty wrote the metadata it reads.
 */
function queryOf(dto: Type<unknown>): MethodDecorator {
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
const dryRunBody = (summary: string, value: object) => ({ dryRun: { summary, value } });

/** The write headers: Idempotency-Key and If-Match (an ETag from this API: "<version>"). */
function headers(req: Request): WriteHeaders {
  const key = req.header('idempotency-key');
  const ifMatch = req.header('if-match');
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw AppError.invalid([{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID' }]);
  }
  let expectedVersion: number | undefined;
  if (ifMatch !== undefined && ifMatch.trim() !== '*') {
    const match = /^(W\/)?(?:"(\d{1,10})"|(\d{1,10}))$/.exec(ifMatch.trim());
    if (!match) throw AppError.invalid([{ path: 'If-Match', message: 'If-Match must be the ETag of the agent, e.g. "3" (see the ETag header of GET)' }]);
    // If-Match compares strongly (RFC 9110 §13.1.1): a weak tag never matches. This API hands out strong ones only.
    if (match[1]) {
      throw new AppError('precondition_failed', `If-Match ${ifMatch.trim()} is a weak ETag, which never matches If-Match (a strong comparison): send the agent's ETag as GET gives it, e.g. "${match[2] ?? match[3]}"`, [
        { path: 'If-Match', message: 'a weak ETag never matches' },
      ]);
    }
    expectedVersion = Number(match[2] ?? match[3]);
  }
  return { idempotencyKey: key, expectedVersion };
}

/**
 * Every REST call runs in an operation context naming the caller: authenticated (Authorization:
 * Bearer), then the principal's subject acts and X-Actor is only a note; with authentication off
 * the X-Actor header (or "api") acts, as before. helm's own words reach admins only, in errors and in answers.
 */
@Injectable()
export class RestContextInterceptor implements NestInterceptor {
  constructor(
    private readonly authenticator: Authenticator,
    private readonly authorizer: Authorizer,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    return new Observable((subscriber) => {
      this.context(req)
        .then((operation) =>
          // The request id (X-Request-Id or a new one) and trace id come from the HTTP door's context around this one.
          OperationContexts.run(operation, () =>
            next
              .handle()
              .pipe(
                map((answer: unknown) => answerForCaller(answer, isAdmin(this.authorizer, operation.principal))),
                catchError((error: unknown) => throwError(() => forCaller(error, isAdmin(this.authorizer, operation.principal)))),
              )
              .subscribe(subscriber),
          ),
        )
        .catch((error: unknown) => subscriber.error(error));
    });
  }

  private async context(req: Request): Promise<NewOperationContext> {
    const { principal } = await this.authenticator.forRequest(req);
    OperationContexts.learn({ subject: principal.subject });
    const claimed = actorOf(req);
    if (!this.authenticator.enabled) return { door: 'rest', actor: claimed ?? 'api', principal };
    return { door: 'rest', actor: principal.subject, principal, note: claimed };
  }
}

/** X-Actor as sent (UTF-8; Node hands headers over as latin1), refused when it cannot name anyone. */
function actorOf(req: Request): string | undefined {
  const raw = req.header('x-actor');
  if (raw === undefined) return undefined;
  const actor = decodeUtf8(raw).trim();
  if (actor.length === 0) return undefined; // an empty variable in a pipeline: as if left out
  if (!isRecordableActor(actor)) {
    throw AppError.invalid([{ path: 'X-Actor', message: 'X-Actor must be 1 to 253 printable characters naming who acts (a user or a pipeline), or be left out' }]);
  }
  return actor;
}

/** A header's bytes (Node reads them as latin1) as UTF-8 when they are UTF-8, else as they came. */
function decodeUtf8(raw: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(raw, 'latin1'));
  } catch {
    return raw;
  }
}

/**
 * DELETE reads its arguments from the query: a body such as {"dryRun": true} would be lost and
 * the delete would run for real, so any body is refused, whatever its content type.
 */
function queryOnly(req: Request): void {
  const length = Number(req.headers['content-length'] ?? 0);
  if (length === 0 && req.headers['transfer-encoding'] === undefined) return;
  throw AppError.invalid([
    { path: 'body', message: `DELETE reads its arguments from the query, not a body: send them as query parameters instead, e.g. ${req.path}?dryRun=true` },
  ]);
}

/**
 * Writes with a JSON body read nothing from the query: a ?dryRun=true there (or a misspelt
 * one) would be lost and the write would run for real, so any query parameter is refused.
 */
function bodyOnly(req: Request): void {
  const keys = Object.keys((req.query ?? {}) as Record<string, unknown>);
  if (keys.length === 0) return;
  throw AppError.invalid(
    keys.map((key) => ({ path: key, message: `query parameter "${key}" is not read on ${req.method} ${req.path}: send it in the JSON body instead, e.g. {"${key}": ...}` })),
  );
}

/** The agent's version as its ETag, for If-Match on the next write. */
function etag(res: Response, agent: { version: number } | null | undefined): void {
  if (agent) res.setHeader('ETag', `"${agent.version}"`);
}

@ApiTags('agents')
@ApiExtraModels(ErrorResponseDto)
@Controller('api/v1')
@UseInterceptors(RestContextInterceptor)
export class AgentsController {
  private readonly access: AgentAccess;

  constructor(
    private readonly agents: AgentsService,
    private readonly serviceInfo: ServiceInfoService,
    authorizer: Authorizer,
    repository: AgentsRepository,
  ) {
    this.access = new AgentAccess(authorizer, repository);
  }

  @Get('info')
  @ApiOperation({
    operationId: 'getInfo',
    summary: 'Service info: version, chart, helm, store, capabilities, toolset limits, shipped presets',
    description: 'What this installation offers before you call it: the chart it installs, the helm it runs, the store, capability flags, the toolset grammar and the shipped presets. The same as the MCP tool get_info.',
  })
  @ApiResponse({ status: 200, description: 'The service and what it offers', type: InfoDto })
  @(error(400, 'invalid_request: the X-Actor header cannot name anyone', EXAMPLES.invalidActor))
  async info(): Promise<InfoDto> {
    await this.access.authorize('get_info');
    return this.serviceInfo.info({ paths: this.access.isAdmin() });
  }

  @Get('agents')
  @ApiOperation({
    operationId: 'listAgents',
    summary: 'List agents, filtered by namespace, label and status, cursor-paginated',
    description: 'Agents from the store (no helm run), oldest first; pass nextCursor as cursor for the next page. The same as the MCP tool list_agents.',
  })
  @queryOf(ListAgentsQueryDto)
  @ApiResponse({ status: 200, description: 'One page of agents', type: AgentPageDto })
  @(error(400, 'invalid_request: a filter or the page size is wrong; details name it', EXAMPLES.invalidQuery))
  async list(@Query() query: Record<string, unknown>): Promise<AgentPageDto> {
    const input = parseInput(ListAgentsQueryDto, query ?? {});
    await this.access.authorize('list_agents', { namespace: input.namespace });
    return this.agents.list(input, { namespaceLike: this.access.namespaceLike('list_agents') });
  }

  @Post('agents')
  @ApiOperation({
    operationId: 'createAgent',
    summary: 'Create an agent (one helm release of the Generic agent chart); dryRun answers with the values and manifests',
    description:
      'Installs a helm release that renders a kagent Agent and records it as revision 1 (201). With dryRun: true nothing is written and the answer (200) holds the values and manifests it would write. The example body is a dry run. The same as the MCP tool create_agent.',
  })
  @ApiBody({ type: CreateAgentDto, examples: dryRunBody('Dry run of the incident-helper agent (writes nothing)', REQUEST_EXAMPLES.create) })
  @errors(writeHeaders)
  @ApiResponse({ status: 201, description: 'Created: the agent exists now (ETag: its version)', type: CreatedAgentDto })
  @ApiResponse({ status: 200, description: 'Dry run: what would be written; nothing was', type: CreateDryRunDto })
  @errors(CREATE_ERRORS)
  async create(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<CreateResultDto> {
    bodyOnly(req);
    const input = parseInput(CreateAgentDto, body);
    await this.access.authorize('create_agent', input);
    const result = await this.agents.create(withWriteHeaders(input, { idempotencyKey: headers(req).idempotencyKey }));
    res.status(result.dryRun ? 200 : 201);
    etag(res, result.agent);
    return result;
  }

  @Post('agents/validate')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'validateAgent',
    summary: 'Validate a create or update without writing: every violation plus the rendered manifests',
    description: 'valid: false with every violation is an answer (200), not an error; 400 is only for a request that cannot be read at all. The same as the MCP tool validate_agent.',
  })
  @ApiBody({ type: ValidateAgentDto, examples: { create: { summary: 'Would the incident-helper agent be accepted?', value: REQUEST_EXAMPLES.validate } } })
  @ApiResponse({ status: 200, description: 'The verdict, every violation and the manifests', type: ValidateResultDto })
  @(error(400, 'invalid_request: the request could not be read at all', EXAMPLES.invalid))
  async validate(@Body() body: unknown, @Req() req: Request): Promise<ValidateResultDto> {
    bodyOnly(req);
    const command = readValidateCommand(body);
    await this.access.authorizeValidate(command);
    return this.agents.validate(command);
  }

  @Get('agents/:namespace/:name')
  @ApiOperation({
    operationId: 'getAgent',
    summary: 'One agent: record, chart values, toolset, revision, last operation',
    description: 'Read from the store (no helm run); the ETag header is the version to send in If-Match. The same as the MCP tool get_agent.',
  })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, description: 'The agent (ETag: its version)', type: AgentDto })
  @errors(READ_ERRORS)
  async get(@Param() ref: Record<string, string>, @Res({ passthrough: true }) res: Response): Promise<AgentDto> {
    const input = parseInput(AgentRefDto, ref);
    await this.access.authorize('get_agent', input);
    const agent = await this.agents.get(input);
    etag(res, agent);
    return agent;
  }

  @Patch('agents/:namespace/:name')
  @ApiOperation({
    operationId: 'updateAgent',
    summary: 'Update an agent: fields sent replace theirs (toolset, labels, annotations whole); fields omitted are kept',
    description: 'Upgrades the helm release and records a new revision; an update that changes nothing runs no helm (changed: false). The example body is a dry run. The same as the MCP tool update_agent.',
  })
  @(writePath[0])
  @(writePath[1])
  @ApiBody({ type: UpdateAgentDto, examples: dryRunBody('Dry run: add server:github to the toolset (writes nothing)', REQUEST_EXAMPLES.update) })
  @errors([...writeHeaders, ifMatch])
  @ApiResponse({ status: 200, description: 'The values before and after (ETag: the new version)', type: UpdateResultDto })
  @errors(WRITE_ERRORS)
  async update(@Param() ref: Record<string, string>, @Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<UpdateResultDto> {
    bodyOnly(req);
    const target = parseInput(AgentRefDto, ref);
    await this.access.authorize('update_agent', target);
    const result = await this.agents.update(target, withWriteHeaders(parseInput(UpdateAgentDto, body), headers(req)));
    etag(res, result.agent);
    return result;
  }

  @Delete('agents/:namespace/:name')
  @ApiOperation({
    operationId: 'deleteAgent',
    summary: 'Delete an agent: uninstalls its release; the record and history are kept as deleted',
    description: 'Arguments come in the query (a body is refused). The same as the MCP tool delete_agent.',
  })
  @(writePath[0])
  @(writePath[1])
  @ApiQuery({ name: 'dryRun', required: false, description: 'Answer as the delete would, remove nothing (the example is a dry run: choose false to delete)', schema: { type: 'boolean', example: true } })
  @errors([...writeHeaders, ifMatch])
  @ApiResponse({ status: 200, description: 'What was removed (or would be)', type: DeleteResultDto })
  @errors(WRITE_ERRORS)
  async delete(@Param() ref: Record<string, string>, @Query() query: Record<string, unknown>, @Req() req: Request): Promise<DeleteResultDto> {
    queryOnly(req);
    const target = parseInput(AgentRefDto, ref);
    await this.access.authorize('delete_agent', target);
    return this.agents.delete(target, withWriteHeaders(parseInput(DeleteAgentDto, deleteInput(query)), headers(req)));
  }

  @Get('agents/:namespace/:name/status')
  @ApiOperation({
    operationId: 'getAgentStatus',
    summary: 'Status verdict ready | progressing | failed | unknown with one sentence',
    description: "Reads the helm release and the live Agent's conditions, and names any drift from the store. The same as the MCP tool get_agent_status.",
  })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, description: 'The verdict and why', type: StatusDto })
  @errors(READ_ERRORS)
  async status(@Param() ref: Record<string, string>): Promise<StatusDto> {
    const target = parseInput(AgentRefDto, ref);
    await this.access.authorize('get_agent_status', target);
    return this.agents.status(target, { admin: this.access.isAdmin() });
  }

  @Get('agents/:namespace/:name/revisions')
  @ApiOperation({
    operationId: 'listAgentRevisions',
    summary: 'Every applied change: who, when, values',
    description:
      'From the store, oldest first; a revision number is what rollback takes. With life=all, also the revisions of earlier agents of the same name that were deleted, each marked with its life. The same as the MCP tool list_agent_revisions.',
  })
  @(agentPath[0])
  @(agentPath[1])
  @queryOf(RevisionsQueryDto)
  @ApiResponse({ status: 200, description: 'The revisions of the agent', type: RevisionListDto })
  @errors(READ_ERRORS)
  async revisions(@Param() ref: Record<string, string>, @Query() query: Record<string, unknown>): Promise<RevisionListDto> {
    const target = parseInput(AgentRefDto, ref);
    const input = parseInput(RevisionsQueryDto, query ?? {});
    await this.access.authorize('list_agent_revisions', target);
    return this.agents.revisions(target, input);
  }

  @Post('agents/:namespace/:name/rollback')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rollbackAgent',
    summary: "Roll back to a revision's values; the rollback is recorded as a new revision",
    description: 'Applies the values of an earlier revision with helm and records them as a new revision. The example body is a dry run. The same as the MCP tool rollback_agent.',
  })
  @(writePath[0])
  @(writePath[1])
  @ApiBody({ type: RollbackAgentDto, examples: dryRunBody('Dry run: back to revision 1 (writes nothing)', REQUEST_EXAMPLES.rollback) })
  @errors([...writeHeaders, ifMatch])
  @ApiResponse({ status: 200, description: 'The values before and after (ETag: the new version)', type: RollbackResultDto })
  @errors(WRITE_ERRORS)
  async rollback(@Param() ref: Record<string, string>, @Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<RollbackResultDto> {
    bodyOnly(req);
    const target = parseInput(AgentRefDto, ref);
    await this.access.authorize('rollback_agent', target);
    const result = await this.agents.rollback(target, withWriteHeaders(parseInput(RollbackAgentDto, body), headers(req)));
    etag(res, result.agent);
    return result;
  }
}

/** The journal on REST, under its own tag (a method tag adds to the class's, so it lives apart from the agents). */
@ApiTags('audit')
@Controller('api/v1')
@UseInterceptors(RestContextInterceptor)
export class AuditController {
  private readonly access: AgentAccess;

  constructor(
    private readonly agents: AgentsService,
    authorizer: Authorizer,
    repository: AgentsRepository,
  ) {
    this.access = new AgentAccess(authorizer, repository);
  }

  @Get('operations')
  @ApiOperation({
    operationId: 'listOperations',
    summary: 'The audit trail: every write and every refusal by authorization, newest first',
    description:
      'Who (subject, how authenticated, door, MCP client, request id), what, on which agent, the outcome; filtered by subject, namespace, name, operation, outcome and time, cursor-paginated. ' +
      'Admin-only unless the policy grants list_operations. The same as the MCP tool list_operations.',
  })
  @queryOf(ListOperationsQueryDto)
  @ApiResponse({ status: 200, description: 'One page of the journal', type: OperationPageDto })
  @(error(400, 'invalid_request: a filter or the page size is wrong; details name it', EXAMPLES.invalidQuery))
  async operations(@Query() query: Record<string, unknown>): Promise<OperationPageDto> {
    const input = parseInput(ListOperationsQueryDto, query ?? {});
    await this.access.authorize('list_operations', { namespace: input.namespace });
    return this.agents.operations(input, { namespacePatterns: this.access.namespacePatterns('list_operations'), reader: this.access.journalReader() });
  }
}

/** DELETE carries its arguments in the query: "true"/"false" and digits become booleans and numbers; anything else is refused by the DTO. */
function deleteInput(query: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = { ...query };
  if (input.dryRun === 'true') input.dryRun = true;
  else if (input.dryRun === 'false') input.dryRun = false;
  if (typeof input.expectedVersion === 'string' && /^\d+$/.test(input.expectedVersion)) input.expectedVersion = Number(input.expectedVersion);
  return input;
}

