import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CreateAgentDto, ListAgentsQueryDto, RollbackAgentDto, UpdateAgentDto, ValidateAgentDto } from './agents.dto.js';
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
import { AgentsService, type Caller } from './agents.service.js';
import { ErrorResponseDto } from './error-response.dto.js';
import { ServiceInfoService } from './service-info.service.js';

const ERRORS = [
  ApiResponse({ status: 400, description: 'invalid_request: the input is wrong; details name each field', type: ErrorResponseDto }),
  ApiResponse({ status: 404, description: 'not_found', type: ErrorResponseDto }),
];
const WRITE_ERRORS = [
  ...ERRORS,
  ApiResponse({ status: 409, description: 'conflict', type: ErrorResponseDto }),
  ApiResponse({ status: 502, description: 'backend_error: helm or the cluster failed; the message is helm\'s', type: ErrorResponseDto }),
];
const errors = (list: MethodDecorator[]): MethodDecorator => (target, key, descriptor) => {
  for (const decorate of list) decorate(target, key, descriptor);
};
const agentPath = [ApiParam({ name: 'namespace', example: 'agents' }), ApiParam({ name: 'name', example: 'incident-helper' })];

/** The caller recorded in the journal: the X-Actor header, or "api". */
function caller(req: Request): Caller {
  const header = req.header('x-actor');
  return { actor: header && header.length <= 253 ? header : 'api' };
}

@ApiTags('agents')
@ApiExtraModels(ErrorResponseDto)
@Controller('api/v1')
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
    return this.agents.list(query);
  }

  @Post('agents')
  @ApiOperation({ operationId: 'createAgent', summary: 'Create an agent (one helm release of the Generic agent chart); dryRun answers with the values and manifests' })
  @ApiBody({ type: CreateAgentDto })
  @ApiResponse({ status: 201, description: 'Created', type: CreateResultDto })
  @ApiResponse({ status: 200, description: 'Dry run: what would be written', type: CreateResultDto })
  @errors(WRITE_ERRORS)
  async create(@Body() body: unknown, @Req() req: Request, @Res({ passthrough: true }) res: Response): Promise<CreateResultDto> {
    const result = await this.agents.create(body, caller(req));
    res.status(result.dryRun ? 200 : 201);
    return result;
  }

  @Post('agents/validate')
  @HttpCode(200)
  @ApiOperation({ operationId: 'validateAgent', summary: 'Validate a create or update without writing: every violation plus the rendered manifests' })
  @ApiBody({ type: ValidateAgentDto })
  @ApiResponse({ status: 200, type: ValidateResultDto })
  @ApiResponse({ status: 400, description: 'The request could not be read at all', type: ErrorResponseDto })
  validate(@Body() body: unknown): Promise<ValidateResultDto> {
    return this.agents.validate(body);
  }

  @Get('agents/:namespace/:name')
  @ApiOperation({ operationId: 'getAgent', summary: 'One agent: record, chart values, toolset, revision, last operation' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, type: AgentDto })
  @errors(ERRORS)
  get(@Param() ref: Record<string, string>): Promise<AgentDto> {
    return this.agents.get(ref);
  }

  @Patch('agents/:namespace/:name')
  @ApiOperation({ operationId: 'updateAgent', summary: 'Update an agent: fields sent replace theirs (toolset, labels, annotations whole); fields omitted are kept' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiBody({ type: UpdateAgentDto })
  @ApiResponse({ status: 200, type: UpdateResultDto })
  @errors(WRITE_ERRORS)
  update(@Param() ref: Record<string, string>, @Body() body: unknown, @Req() req: Request): Promise<UpdateResultDto> {
    return this.agents.update(ref, body, caller(req));
  }

  @Delete('agents/:namespace/:name')
  @ApiOperation({ operationId: 'deleteAgent', summary: 'Delete an agent: uninstalls its release; the record and history are kept as deleted' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiQuery({ name: 'dryRun', required: false, type: Boolean })
  @ApiResponse({ status: 200, type: DeleteResultDto })
  @errors(WRITE_ERRORS)
  delete(@Param() ref: Record<string, string>, @Query() query: Record<string, unknown>, @Req() req: Request): Promise<DeleteResultDto> {
    return this.agents.delete(ref, deleteInput(query), caller(req));
  }

  @Get('agents/:namespace/:name/status')
  @ApiOperation({ operationId: 'getAgentStatus', summary: 'Status verdict ready | progressing | failed | unknown with one sentence' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, type: StatusDto })
  @errors(ERRORS)
  status(@Param() ref: Record<string, string>): Promise<StatusDto> {
    return this.agents.status(ref);
  }

  @Get('agents/:namespace/:name/revisions')
  @ApiOperation({ operationId: 'listAgentRevisions', summary: 'Every applied change: who, when, values' })
  @(agentPath[0])
  @(agentPath[1])
  @ApiResponse({ status: 200, type: RevisionListDto })
  @errors(ERRORS)
  revisions(@Param() ref: Record<string, string>): Promise<RevisionListDto> {
    return this.agents.revisions(ref);
  }

  @Post('agents/:namespace/:name/rollback')
  @HttpCode(200)
  @ApiOperation({ operationId: 'rollbackAgent', summary: "Roll back to a revision's values; the rollback is recorded as a new revision" })
  @(agentPath[0])
  @(agentPath[1])
  @ApiBody({ type: RollbackAgentDto })
  @ApiResponse({ status: 200, type: RollbackResultDto })
  @errors(WRITE_ERRORS)
  rollback(@Param() ref: Record<string, string>, @Body() body: unknown, @Req() req: Request): Promise<RollbackResultDto> {
    return this.agents.rollback(ref, body, caller(req));
  }
}

/** DELETE carries dryRun in the query: "true"/"false" strings become booleans, anything else is refused by the DTO. */
function deleteInput(query: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = { ...query };
  if (input.dryRun === 'true') input.dryRun = true;
  else if (input.dryRun === 'false') input.dryRun = false;
  return input;
}

