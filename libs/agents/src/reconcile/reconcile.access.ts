import { Injectable } from '@nestjs/common';
import { AgentAccess } from '../audit/agent-access.js';
import type { AdoptAgentDto, AdoptResultDto, ReconcileRequestDto, ReconcileResultDto } from './reconcile.dto.js';
import { Reconciler } from './reconcile.service.js';

/**
 * The reconciler and adoption as both doors serve them: authorized by the policy first (a
 * reconcile of every namespace needs the operation granted on "*"), refusals journaled.
 */
@Injectable()
export class ReconcileDoor {
  static readonly operations: readonly string[] = ['reconcile_agents', 'adopt_agent'];
  constructor(
    private readonly reconciler: Reconciler,
    private readonly access: AgentAccess,
  ) {}

  async reconcile(input: ReconcileRequestDto): Promise<ReconcileResultDto> {
    await this.access.authorize('reconcile_agents', { namespace: input.namespace ?? '*', name: input.name });
    return this.reconciler.reconcile(input);
  }

  async adopt(input: AdoptAgentDto): Promise<AdoptResultDto> {
    await this.access.authorize('adopt_agent', input);
    return this.reconciler.adopt(input);
  }
}
