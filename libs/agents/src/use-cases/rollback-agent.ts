import { AppError } from '@app/common';
import type { ReleaseRef } from '@app/helm';
import type { AgentRefDto, RollbackAgentDto } from '../api/requests.dto.js';
import type { AgentWithLastOperation, OperationRecord, RevisionRecord } from '../persistence/records.js';
import type { RollbackResultDto } from '../api/responses.dto.js';
import { appliedValues } from '../runner/write-runner.js';
import type { Applied, PlanTools, WritePlan, Write } from '../runner/write-plan.js';

interface Decided extends Write {
  agent: AgentWithLastOperation;
  restore: RevisionRecord;
}

/**
 * Rollback: the values of an earlier revision, applied with one `helm upgrade` and recorded as a
 * new revision. Freeing a release helm holds pending-* takes `helm rollback` (an upgrade is refused there).
 */
export function rollbackAgent({ namespace, name }: AgentRefDto, input: RollbackAgentDto): WritePlan<Decided, RollbackResultDto> {
  const release = { namespace, name };
  return {
    kind: 'rollback',
    namespace,
    name,
    dryRun: input.dryRun ?? false,
    idempotencyKey: input.requestId,
    request: { revision: input.revision, expectedVersion: input.expectedVersion, freeStuckRelease: input.freeStuckRelease },
    freeStuckRelease: input.freeStuckRelease,
    expects: { present: true, expectedVersion: input.expectedVersion },
    async decide({ agent: found, stuck }, tools) {
      const agent = found!;
      const restore = await tools.repository.revision(agent.id, input.revision);
      if (!restore) {
        throw new AppError('not_found', `agent ${namespace}/${name} has no revision ${input.revision}: it has revisions 1 to ${agent.revision} (list_agent_revisions)`, [
          { path: 'revision', message: `choose a revision from 1 to ${agent.revision}` },
        ]);
      }
      return {
        agent,
        restore,
        journal: { agentId: agent.id, intent: { spec: restore.spec, values: restore.values, rolledBackTo: restore.revision }, baseHelmRevision: agent.helmRevision },
        change: stuck.length > 0 ? { run: () => freeRelease(tools, release, restore, stuck) } : { upgrade: { values: restore.values } },
        record: { change: { agent, spec: restore.spec, values: restore.values, kind: 'rollback', rolledBackTo: restore.revision } },
      };
    },
    async preview({ agent, restore }, _found, tools) {
      // Rendered as the real rollback applies it: the old values through the chart configured now,
      // which may refuse them (a chart upgraded since); the dry run then answers that refusal.
      await tools.helm.template(release, tools.chart, restore.values);
      return { dryRun: true, rolledBackTo: restore.revision, before: agent.values, after: restore.values, agent: tools.view(agent) };
    },
    answer: async ({ agent, restore }, applied, recorded, _found, tools) => ({
      dryRun: false, rolledBackTo: restore.revision, before: agent.values, after: applied.values ?? restore.values, agent: tools.view(recorded),
    }),
    recorded: async ({ agent, revision, previous }) => ({
      dryRun: false, rolledBackTo: revision?.rolledBackTo ?? input.revision, before: previous?.values ?? agent.values, after: revision?.values ?? agent.values, agent,
    }),
  };
}

/** helm rollback to the revision's own helm revision when helm still has it, then the release as it stands. */
async function freeRelease(tools: PlanTools, release: ReleaseRef, restore: RevisionRecord, stuck: OperationRecord[]): Promise<Applied> {
  const history = await tools.helm.history(release).catch(() => []);
  const target = restore.helmRevision !== null && history.some((h) => h.revision === restore.helmRevision) ? restore.helmRevision : undefined;
  const fallback = history.filter((h) => h.status === 'deployed' || h.status === 'superseded').at(-1)?.revision;
  const revision = target ?? fallback;
  if (revision === undefined) {
    throw new AppError('backend_error', `helm has no deployed revision of ${release.namespace}/${release.name} to return to (interrupted: ${stuck.map((op) => op.id).join(', ')}): remove the release with helm uninstall, then create the agent again`);
  }
  await tools.helm.rollback(release, revision);
  const info = target === undefined ? await tools.helm.upgradeInstall(release, tools.chart, restore.values) : await tools.helm.status(release);
  if (!info) throw new AppError('backend_error', `helm rolled back ${release.namespace}/${release.name} but then reports no release: check it with helm history`);
  // helm rollback put back that revision's own chart, which the record keeps; an upgrade applied the configured one.
  return { helmRevision: info.revision, values: appliedValues(release, info.values, restore.values), manifests: info.manifest, ...(target === undefined && { chart: tools.chart }) };
}
