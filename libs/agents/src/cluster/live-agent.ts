import { KAGENT_KINDS, type Condition, type KubeClient, type LiveAgent, type LiveObject } from '@app/kube';
import type { LiveAgents } from '../runner/ports.js';

/** What reads an agent's live object: its Agent (chart 0.x), or any kagent object (chart 1.x's AgentTemplate). */
export type LiveReader = LiveAgents & Partial<Pick<KubeClient, 'getObject'>>;

/**
 * The live object of an agent, of the kind its release applied: chart 0.x's `kagent.dev/v1alpha2`
 * `Agent`, or chart 1.x's `kagent.dev/v1alpha3` `AgentTemplate`, shown as an Agent is (templateAsAgent).
 * Without an applied object (no release, or one not deployed) the Agent is read.
 */
export async function readLive(kube: LiveReader, applied: LiveAgent | null, namespace: string, name: string): Promise<LiveAgent | null> {
  if ((applied as { kind?: unknown } | null)?.kind !== 'AgentTemplate' || !kube.getObject) return kube.getAgent(namespace, name);
  const template = await kube.getObject<LiveObject>(KAGENT_KINDS.agentTemplate, namespace, name);
  return template && templateAsAgent(template);
}

/**
 * An AgentTemplate as status and drift read an Agent: its spec and metadata, and, since it carries no
 * conditions of its own, one `Accepted` and one `Ready` condition folded from its harnesses' (each
 * true only when every harness says so; otherwise the first harness's that does not), observed at
 * the template's `status.observedGeneration`.
 */
export function templateAsAgent(template: LiveObject): LiveAgent {
  const status = (template.status ?? {}) as { observedGeneration?: number; harnesses?: { harness?: string; conditions?: Condition[] }[] };
  const harnesses = status.harnesses ?? [];
  const fold = (type: string): Condition[] => {
    const found = harnesses.map((h) => h.conditions?.find((c) => c.type === type)).filter((c): c is Condition => c !== undefined);
    if (found.length === 0) return [];
    const off = found.find((c) => c.status !== 'True');
    return [{ ...(off ?? found[0]), type, observedGeneration: status.observedGeneration }];
  };
  return {
    metadata: template.metadata,
    spec: template.spec,
    status: { observedGeneration: status.observedGeneration, conditions: [...fold('Accepted'), ...fold('Ready')] },
  };
}
