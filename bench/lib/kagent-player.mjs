// Plays kagent's controller for the benchmark (there is no kagent in the test control plane): every
// Agent whose generation it has not observed yet gets its status written, `observedGeneration` and
// Accepted and Ready True, which is what a rollout's health gate waits for. The same idea as the
// cluster suite's playKagent (test/rollout/fleet-rollout.cluster-spec.ts), over bench/lib/kube-api.mjs.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { kubeApi } from './kube-api.mjs';

const AGENTS = (namespace) => `/apis/kagent.dev/v1alpha2/namespaces/${namespace}/agents`;

/**
 * Starts the loop over `namespaces` (a list every `intervalMs`, then one status write per Agent it
 * has not seen at its generation). `marked` counts the status writes; `stop()` ends the loop.
 */
export function playKagent(kubeconfig, namespaces, { intervalMs = 250 } = {}) {
  const api = kubeApi(kubeconfig, { maxSockets: 4 });
  let stopped = false;
  const stats = { marked: 0, lists: 0, lastMarkAt: 0 };
  const loop = (async () => {
    while (!stopped) {
      for (const namespace of namespaces) {
        const list = await api.call('GET', AGENTS(namespace)).catch(() => null);
        stats.lists++;
        for (const agent of list?.json?.items ?? []) {
          if (agent.status?.observedGeneration === agent.metadata.generation) continue;
          const now = new Date().toISOString();
          const conditions = [
            { type: 'Accepted', status: 'True', reason: 'Reconciled', message: 'accepted', lastTransitionTime: now },
            { type: 'Ready', status: 'True', reason: 'DeploymentReady', message: 'the agent is ready', lastTransitionTime: now },
          ];
          const body = { ...agent, status: { observedGeneration: agent.metadata.generation, conditions } };
          // a 409 (changed meanwhile) is seen again on the next round
          const res = await api.call('PUT', `${AGENTS(namespace)}/${agent.metadata.name}/status`, body).catch(() => null);
          if (res?.status === 200) {
            stats.marked++;
            stats.lastMarkAt = performance.now();
          }
        }
      }
      await sleep(intervalMs);
    }
  })();
  return {
    stats,
    async stop() {
      stopped = true;
      await loop;
      api.close();
    },
  };
}
