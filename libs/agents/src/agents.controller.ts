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
} from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiHeader, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Observable } from 'rxjs';
import { AppError, OperationContexts } from '@app/common';
import { AgentRefDto, CreateAgentDto, DeleteAgentDto, ListAgentsQueryDto, RollbackAgentDto, UpdateAgentDto, ValidateAgentDto } from './agents.dto.js';
import { readValidateCommand, withWriteHeaders, type WriteHeaders } from './agents.commands.js';
import { parseInput } from './agents.input.js';
import {
  AgentDto,
  AgentPageDto,
  CreateResultDto,
  DeleteResultDto,
  InfoDto,
  RevisionListDto,
  RollbackResultDto,
  StatusDto,
  UpdateResultDto,
  ValidateResultDto,
} from './agents.responses.js';
import { isRecordableActor } from './actor.js';
import { AgentsService } from './agents.service.js';
import { ErrorResponseDto } from './error-response.dto.js';
import { ServiceInfoService } from './service-info.service.js';

const ERRORS = [
  ApiResponse({ status: 400, description: 'invalid_request: the input is wrong; details name each field', type: ErrorResponseDto }),
  ApiResponse({ status: 404, description: 'not_found', type: ErrorResponseDto }),
];
const WRITE_ERRORS = [
  ...ERRORS,
  ApiResponse({ status: 409, description: 'conflict: the agent exists, another write holds it, or an Idempotency-Key was reused', type: ErrorResponseDto }),
  ApiResponse({ status: 412, description: 'precondition_failed: If-Match names an older version', type: ErrorResponseDto }),
  ApiResponse({ status: 503, description: 'unavailable: this replica is shutting down', type: ErrorResponseDto }),
  ApiResponse({ status: 502, description: 'backend_error: helm or the cluster failed; the message is helm\'s', type: ErrorResponseDto }),
];
const errors = (list: MethodDecorator[]): MethodDecorator => (target, key, descriptor) => {
  for (const decorate of list) decorate(target, key, descriptor);
};
const writeHeaders = [
  ApiHeader({ name: 'Idempotency-Key', required: false, description: 'A retry with the same key and body gets the first answer without a second helm run; the same key with another body is refused (409)' }),
  ApiHeader({ name: 'X-Actor', required: false, description: 'Who is asking, recorded in revisions and the journal (default "api")' }),
];
const ifMatch = ApiHeader({ name: 'If-Match', required: false, description: 'The ETag of the agent ("<version>"): a stale write is refused with 412 naming the current version' });
const agentPath = [ApiParam({ name: 'namespace', example: 'agents' }), ApiParam({ name: 'name', example: 'incident-helper' })];

/** The write headers: Idempotency-Key and If-Match (an ETag from this API: "<version>"). */
function headers(req: Request): WriteHeaders {
  const key = req.header('idempotency-key');
  const ifMatch = req.header('if-match');
  if (key !== undefined && !/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw AppError.invalid([{ path: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 visible ASCII characters, e.g. a UUID' }]);
  }
  let expectedVersion: number | undefined;
  if (ifMatch !== undefined && ifMatch.trim() !== '*') {
    const match = /^(?:W\/)?(?:"(\d{1,10})"|(\d{1,10}))$/.exec(ifMatch.trim());
    if (!match) throw AppError.invalid([{ path: 'If-Match', message: 'If-Match must be the ETag of the agent, e.g. "3" (see the ETag header of GET)' }]);
    expectedVersion = Number(match[1] ?? match[2]);
  }
  return { idempotencyKey: key, expectedVersion };
}

/** Every REST call runs in an operation context naming the caller (the X-Actor header, or "api"). */
@Injectable()
export class RestContextInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = context.switchToHttp().getRequest<Request>();
    const actor = actorOf(req) ?? 'api';
    const requestId = req.header('x-request-id');
    return new Observable((subscriber) =>
      OperationContexts.run({ door: 'rest', actor, requestId: requestId && /^[\x21-\x7e]{1,128}$/.test(requestId) ? requestId : undefined }, () =>
        next.handle().subscribe(subscriber),
      ),
    );
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
  constructor(
    private readonly agents: AgentsService,
    private readonly serviceInfo: ServiceInfoService,
  ) {}

  @Get('info')
  @ApiOperation({ operationId: 'getInfo', summary: 'Service info: version, chart, helm, store, capabilities, toolset limits, shipped presets' })
  @ApiResponse({ status: 200, type: InfoDto })
  info(): Promise<InfoDto> {
    return this.serviceInfo.info();
  }

  @Get('agents')
  @ApiOperation({ operationId: 'listAgents', summary: 'List agents, filtered by namespace, label and status, cursor-paginated' })
  @ApiQuery({ type: ListAgentsQueryDto })
  @ApiResponse({ status: 200, type: AgentPageDto })
  @errors(ERRORS)
  list(@Query() query: Record<string, unknown>): Promise<AgentPageDto> {
    return this.agents.list(parseInput(ListAgentsQueryDto, query ?? {}));
  }

  @Post('agents')
  @ApiOperation({ operationId: 'createAgent', summary: 'Create an agent (one helm release of the Generic agent chart); dryRun answers with the values and manifests' })
  @ApiBody({ type: CreateAgentDto })
  @errors(writeHeaders)
  @ApiResponse({ status: 201, description: 'Created', type: CreateResultDto })
  @ApiResponse({ status: 200, description: 'Dry run: what would be written', type: CreateResultDto })
  @errors(WRITE_ERRORS)
  async create(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<CreateResultDto> {
    bodyOnly(req);
    const result = await this.agents.create(withWriteHeaders(parseInput(CreateAgentDto, body), { idempotencyKey: headers(req).idempotencyKey }));
    res.status(result.dryRun ? 200 : 201);
    etag(res, result.agent);
    return result;
  }

  @Post('agents/validate')
  @HttpCode(200)
  @ApiOperation({ operationId: 'validateAgent', summary: 'Validate a create or update without writing: every violation plus the rendered manifests' })
  @ApiBody({ type: ValidateAgentDto })
  @ApiResponse({ status: 200, type: ValidateResultDto })
  @ApiResponse({ status: 400, description: 'The request could not be read at all', type: ErrorResponseDto })
  validate(@Body() body: unknown, @Req() req: Request): Promise<ValidateResultDto> {
    bodyOnly(req);
    return this.agents.validate(readValidateCommand(body));
  }

  @Get('agents/:namespace/:name')
  @ApiOperation({ operationId: 'getAgent', summary: 'One agent: record, chart values, toolset, revision, last operation' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, type: AgentDto })
  @errors(ERRORS)
  async get(@Param() ref: Record<string, string>, @Res({ passthrough: true }) res: Response): Promise<AgentDto> {
    const agent = await this.agents.get(parseInput(AgentRefDto, ref));
    etag(res, agent);
    return agent;
  }

  @Patch('agents/:namespace/:name')
  @ApiOperation({ operationId: 'updateAgent', summary: 'Update an agent: fields sent replace theirs (toolset, labels, annotations whole); fields omitted are kept' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiBody({ type: UpdateAgentDto })
  @errors([...writeHeaders, ifMatch])
  @ApiResponse({ status: 200, type: UpdateResultDto })
  @errors(WRITE_ERRORS)
  async update(@Param() ref: Record<string, string>, @Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<UpdateResultDto> {
    bodyOnly(req);
    const result = await this.agents.update(parseInput(AgentRefDto, ref), withWriteHeaders(parseInput(UpdateAgentDto, body), headers(req)));
    etag(res, result.agent);
    return result;
  }

  @Delete('agents/:namespace/:name')
  @ApiOperation({ operationId: 'deleteAgent', summary: 'Delete an agent: uninstalls its release; the record and history are kept as deleted' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiQuery({ name: 'dryRun', required: false, type: Boolean })
  @errors([...writeHeaders, ifMatch])
  @ApiResponse({ status: 200, type: DeleteResultDto })
  @errors(WRITE_ERRORS)
  delete(@Param() ref: Record<string, string>, @Query() query: Record<string, unknown>, @Req() req: Request): Promise<DeleteResultDto> {
    queryOnly(req);
    return this.agents.delete(parseInput(AgentRefDto, ref), withWriteHeaders(parseInput(DeleteAgentDto, deleteInput(query)), headers(req)));
  }

  @Get('agents/:namespace/:name/status')
  @ApiOperation({ operationId: 'getAgentStatus', summary: 'Status verdict ready | progressing | failed | unknown with one sentence' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, type: StatusDto })
  @errors(ERRORS)
  status(@Param() ref: Record<string, string>): Promise<StatusDto> {
    return this.agents.status(parseInput(AgentRefDto, ref));
  }

  @Get('agents/:namespace/:name/revisions')
  @ApiOperation({ operationId: 'listAgentRevisions', summary: 'Every applied change: who, when, values' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, type: RevisionListDto })
  @errors(ERRORS)
  revisions(@Param() ref: Record<string, string>): Promise<RevisionListDto> {
    return this.agents.revisions(parseInput(AgentRefDto, ref));
  }

  @Post('agents/:namespace/:name/rollback')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rollbackAgent', summary: "Roll back to a revision's values; the rollback is recorded as a new revision" })
  @(agentPath[0])
  @(agentPath[1])
  @ApiBody({ type: RollbackAgentDto })
  @errors([...writeHeaders, ifMatch])
  @ApiResponse({ status: 200, type: RollbackResultDto })
  @errors(WRITE_ERRORS)
  async rollback(@Param() ref: Record<string, string>, @Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<RollbackResultDto> {
    bodyOnly(req);
    const result = await this.agents.rollback(parseInput(AgentRefDto, ref), withWriteHeaders(parseInput(RollbackAgentDto, body), headers(req)));
    etag(res, result.agent);
    return result;
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

