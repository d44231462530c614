import { Body, Controller, HttpCode, Post, UseInterceptors } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiResponse, ApiTags } from '@app/common';
import { RestContextInterceptor, RestRedactionInterceptor } from '../operations/rest-door.js';
import { REQUEST_EXAMPLES } from '../agents.dto.js';
import { parseInput } from '../agents.input.js';
import { AdoptAgentDto, AdoptResultDto, ReconcileRequestDto, ReconcileResultDto } from './reconcile.dto.js';
import { ReconcileDoor } from './reconcile.access.js';

/** The reconciler and adoption on REST; the same methods as the MCP tools reconcile_agents and adopt_agent. */
@ApiTags('admin')
@Controller('api/v1')
@UseInterceptors(RestContextInterceptor, RestRedactionInterceptor)
export class ReconcileController {
  constructor(private readonly reconciler: ReconcileDoor) {}

  @Post('reconcile')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'reconcileAgents',
    summary: 'Bring store, helm releases and live Agents back into agreement now',
    description: 'For one agent or all: compares the store, the helm release and the live Agent and acts by the decision table (record a landed create, uninstall or re-install a half-release, roll back a stuck change) or reports drift. With dryRun it lists what it would do. The same as the MCP tool reconcile_agents.',
  })
  @ApiBody({ type: ReconcileRequestDto, examples: { dryRun: { summary: 'Dry run: what reconcile would do for every agent (does nothing)', value: REQUEST_EXAMPLES.reconcile } } })
  @ApiResponse({ status: 200, description: 'What was found per agent and what was (or would be) done', type: ReconcileResultDto })
  reconcile(@Body() body: unknown): Promise<ReconcileResultDto> {
    return this.reconciler.reconcile(parseInput(ReconcileRequestDto, body ?? {}));
  }

  @Post('agents/adopt')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'adoptAgent',
    summary: 'Take a release of the agent chart the store does not know into the store',
    description: "Records the release as an agent with its helm history as revisions (e.g. after the store was lost). `agent-manager store rebuild` adopts every such release. The same as the MCP tool adopt_agent.",
  })
  @ApiBody({ type: AdoptAgentDto, examples: { dryRun: { summary: 'Dry run: the revisions adopting a release would take in (writes nothing)', value: REQUEST_EXAMPLES.adopt } } })
  @ApiResponse({ status: 200, description: 'The adopted agent and the revisions taken in', type: AdoptResultDto })
  adopt(@Body() body: unknown): Promise<AdoptResultDto> {
    return this.reconciler.adopt(parseInput(AdoptAgentDto, body ?? {}));
  }
}
