import type { CustomObjectsApi } from '@kubernetes/client-node';
import { AppError } from '@app/common';
import { Tracing, type Metrics } from '@app/telemetry';
import type { ClusterState } from './cluster-state.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/** The live kagent Agent as the API server holds it. */
export interface LiveAgent {
  metadata: { name: string; namespace: string; generation?: number; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[]; observedGeneration?: number };
}

export const AGENT_GROUP = 'kagent.dev';
export const AGENT_VERSION = 'v1alpha2';
export const AGENT_PLURAL = 'agents';

/**
 * Reads kagent objects from the cluster helm writes to (the same kubeconfig). Never writes.
 * The Kubernetes client (a large import) loads on the first read, not at start.
 */
export class KubeClient {
  private api: Promise<CustomObjectsApi> | undefined;

  constructor(
    private readonly cluster: ClusterState,
    private readonly kubeconfig?: string,
    private readonly metrics?: Metrics,
  ) {}

  /** The live Agent, or null when the cluster has none of that name. */
  async getAgent(namespace: string, name: string): Promise<LiveAgent | null> {
    const problem = await this.cluster.problem();
    if (problem) throw new AppError('backend_error', problem);
    const api = await this.client();
    const started = process.hrtime.bigint();
    let outcome = 'ok';
    try {
      const attributes = { 'k8s.namespace.name': namespace, 'k8s.resource': `${AGENT_PLURAL}.${AGENT_GROUP}`, 'k8s.verb': 'get' };
      return await Tracing.span('kube get agents', { kind: 'client', attributes }, async () => {
        try {
          return (await api.getNamespacedCustomObject({ group: AGENT_GROUP, version: AGENT_VERSION, namespace, plural: AGENT_PLURAL, name })) as LiveAgent;
        } catch (error) {
          if ((error as { code?: number }).code === 404) return null; // an answer, not a failure of the call
          throw error;
        }
      });
    } catch (error) {
      outcome = 'failed';
      const body = (error as { body?: unknown }).body;
      const detail = typeof body === 'string' ? safeMessage(body) : (error as Error).message;
      throw new AppError('backend_error', `reading Agent ${namespace}/${name} from the cluster failed: ${detail}`);
    } finally {
      this.metrics?.kubeRequest('get', AGENT_PLURAL, outcome, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  private client(): Promise<CustomObjectsApi> {
    this.api ??= import('@kubernetes/client-node').then(({ CustomObjectsApi, KubeConfig }) => {
      const config = new KubeConfig();
      if (this.kubeconfig) config.loadFromFile(this.kubeconfig);
      else config.loadFromDefault();
      return config.makeApiClient(CustomObjectsApi);
    });
    return this.api.catch((error: unknown) => {
      this.api = undefined;
      throw new AppError('backend_error', `the kubeconfig could not be loaded (${(error as Error).message}); set KUBECONFIG to the kubeconfig of the cluster agents are written to`);
    });
  }
}

function safeMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
