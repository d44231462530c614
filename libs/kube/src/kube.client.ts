import { AppError } from '@app/common';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

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

/** Reads kagent objects from the cluster helm writes to (the same kubeconfig). Never writes. */
export class KubeClient {
  private readonly api: CustomObjectsApi;

  constructor(kubeconfig?: string) {
    const config = new KubeConfig();
    if (kubeconfig) config.loadFromFile(kubeconfig);
    else config.loadFromDefault();
    this.api = config.makeApiClient(CustomObjectsApi);
  }

  /** The live Agent, or null when the cluster has none of that name. */
  async getAgent(namespace: string, name: string): Promise<LiveAgent | null> {
    try {
      return (await this.api.getNamespacedCustomObject({ group: AGENT_GROUP, version: AGENT_VERSION, namespace, plural: AGENT_PLURAL, name })) as LiveAgent;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === 404) return null;
      const body = (error as { body?: unknown }).body;
      const detail = typeof body === 'string' ? safeMessage(body) : (error as Error).message;
      throw new AppError('backend_error', `reading Agent ${namespace}/${name} from the cluster failed: ${detail}`);
    }
  }
}

function safeMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
