import { AppError } from '@app/common';
import type { HelmReleases, ListedRelease, ReleaseRef, ReleaseRevision } from '@app/helm';
import { chartValuesOf } from '../persistence/records.js';
import type { AgentDto } from '../api/responses.dto.js';
import { specOf } from '../domain/agent-spec.js';
import type { WritePlan, Write } from '../runner/write-plan.js';

/** The chart's own name (charts/agent/Chart.yaml): releases of it are agents. */
export const AGENT_CHART_NAME = 'agent';

export interface AdoptResult {
  dryRun: boolean;
  agent: AgentDto | null;
  /** The helm revisions taken in as agent-manager revisions, oldest first. */
  revisions: { revision: number; helmRevision: number; status: string }[];
}

interface Decided extends Write {
  history: ReleaseRevision[];
  revisions: AdoptResult['revisions'];
  /** The chart version the release runs, as `helm list` names it. */
  version: string;
}

/**
 * Adopt: a release of the agent chart the store does not know taken into the store, its helm
 * history as revisions (no helm run). Checked under the agent's lock: a concurrent adopt (or a
 * create) may have recorded it meanwhile. `listed`: the release as `helm list` showed it, when known.
 */
export function adoptAgent(releases: HelmReleases, ref: ReleaseRef & { dryRun?: boolean }, listed?: ListedRelease): WritePlan<Decided, AdoptResult> {
  const { namespace, name } = ref;
  return {
    kind: 'create',
    operation: 'adopt_agent',
    namespace,
    name,
    dryRun: ref.dryRun ?? false,
    request: { adopt: true },
    async decide(_found, tools) {
      if (await tools.repository.findActive(namespace, name)) {
        throw new AppError('conflict', `agent ${namespace}/${name} is already in the store: nothing to adopt (reconcile_agents compares it with its release)`);
      }
      const release = await tools.helm.status(ref);
      if (!release) throw new AppError('not_found', `helm has no release ${namespace}/${name} to adopt: list the cluster's releases with helm list --all-namespaces`);
      // `helm status` does not name the chart; `helm list` does.
      const ofChart = listed ?? (await releases.ofChart(AGENT_CHART_NAME)).find((r) => r.namespace === namespace && r.name === name);
      if (!ofChart) {
        throw new AppError('invalid_request', `release ${namespace}/${name} is not of the agent chart (${AGENT_CHART_NAME}): agent-manager adopts only releases of its agent chart`);
      }
      if (release.status !== 'deployed') {
        throw new AppError('conflict', `release ${namespace}/${name} is ${release.status}: reconcile it first (POST /api/v1/reconcile), then adopt it once it is deployed`);
      }
      const history = (await releases.revisions(ref)).filter((r) => r.status === 'deployed' || r.status === 'superseded');
      // A release without a toolset is a legacy agent with implicit full access to the gateway (docs/contract.md §5):
      // recorded, it would read as "no tools" and every later write would render an empty toolset.
      if (history.length > 0 && !Array.isArray(history[history.length - 1].values.toolset)) {
        throw new AppError(
          'conflict',
          `release ${namespace}/${name} declares no toolset: it is a legacy agent with implicit full access to the gateway, which agent-manager does not manage; ` +
            `declare its toolset first (e.g. helm upgrade ${name} --namespace ${namespace} --reuse-values --set-json 'toolset=["preset:read-only"]'), then adopt it`,
          [{ path: 'toolset', message: 'the release has no toolset value' }],
        );
      }
      const revisions = history.map((r, at) => ({ revision: at + 1, helmRevision: r.revision, status: r.status }));
      const version = ofChart.chart.slice(AGENT_CHART_NAME.length + 1);
      const current = history[history.length - 1];
      const values = chartValuesOf(current.values);
      return {
        history,
        revisions,
        version,
        journal: {
          intent: { spec: specOf(values), values },
          baseHelmRevision: null,
          request: { adopt: true, helmRevisions: revisions.map((r) => r.helmRevision) },
          step: `checks passed: recording release ${namespace}/${name} and its ${revisions.length} revision(s) from helm`,
        },
        change: { none: { helmRevision: current.revision, values, manifests: '' } },
        record: { adoption: { chart: { ref: tools.chart.source ?? tools.chart.ref, version }, history: history.map((r) => ({ values: chartValuesOf(r.values), helmRevision: r.revision })) } },
      };
    },
    preview: async ({ revisions }) => ({ dryRun: true, agent: null, revisions }),
    answer: async ({ revisions }, _applied, agent, _found, tools) => ({ dryRun: false, agent: tools.view(agent), revisions }),
  };
}
