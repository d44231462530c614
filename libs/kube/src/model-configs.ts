import type { ConfigurationOptions, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { AppError, type KubeIdentity } from '@app/common';
import type { Metrics } from '@app/telemetry';
import type { ClusterState } from './cluster-state.js';
import { measured, type Condition } from './kube.client.js';
import { readOptions } from './impersonation.js';

export const MODEL_CONFIG_GROUP = 'kagent.dev';
/** The version the chart's Agent (kagent.dev/v1alpha2) refers to by `spec.declarative.modelConfig`. */
export const MODEL_CONFIG_VERSION = 'v1alpha2';
export const MODEL_CONFIG_PLURAL = 'modelconfigs';

/**
 * One kagent ModelConfig as agent-manager shows it: what it is called, which provider and model it
 * configures, and the conditions kagent set. Never its API key: not the Secret's contents, and not
 * which Secret or key holds it (`apiKeySecret`, `apiKeySecretKey` are left out on purpose), nor
 * provider blocks (base URLs, headers, projects) that describe the installation's accounts.
 */
export interface ModelConfigSummary {
  name: string;
  provider: string | null;
  model: string | null;
  conditions: Condition[];
}

/** Why the ModelConfigs of a namespace could not be listed, for the caller's answer or a write's warning. */
export type ModelConfigListFailure = 'forbidden' | 'no_api' | 'no_namespace' | 'unreachable';

/** A listing that failed, classified: `reason` tells a write's check what it could not check and why. */
export class ModelConfigListError extends AppError {
  constructor(
    readonly reason: ModelConfigListFailure,
    error: AppError,
  ) {
    super(error.code, error.message, error.details);
  }
}

interface Client {
  api: CustomObjectsApi;
  core: CoreV1Api;
  options(read: { timeoutMs: number; identity?: KubeIdentity }): ConfigurationOptions;
}

interface RawModelConfig {
  metadata?: { name?: string };
  spec?: { provider?: unknown; model?: unknown };
  status?: { conditions?: unknown };
}

/**
 * Lists kagent ModelConfigs of a namespace, as the caller (KUBE_IMPERSONATE) exactly as
 * KubeClient reads the live Agent: the same kubeconfig, the same impersonation headers, a timeout
 * per read. Never writes, and never reads Secrets.
 */
export class ModelConfigReader {
  private api: Promise<Client> | undefined;

  constructor(
    private readonly cluster: ClusterState,
    private readonly kubeconfig?: string,
    private readonly identity?: () => KubeIdentity | undefined,
    private readonly metrics?: Metrics,
  ) {}

  /**
   * The namespace's ModelConfigs, sorted by name. Throws a ModelConfigListError: `forbidden` (403,
   * the caller may not list them), `no_api` (not_found: the cluster serves no
   * modelconfigs.kagent.dev/v1alpha2, kagent's CRDs are not installed), `no_namespace` (not_found:
   * the namespace does not exist, as far as the caller may tell) or `unreachable`
   * (backend_error: no cluster, or it did not answer within `timeoutMs`).
   */
  list(namespace: string, timeoutMs: number): Promise<ModelConfigSummary[]> {
    return measured(this.metrics, 'list', { group: MODEL_CONFIG_GROUP, plural: MODEL_CONFIG_PLURAL }, namespace, () => this.read(namespace, timeoutMs));
  }

  private async read(namespace: string, timeoutMs: number): Promise<ModelConfigSummary[]> {
    const problem = await this.cluster.problem();
    if (problem) throw new ModelConfigListError('unreachable', new AppError('backend_error', problem));
    let identity: KubeIdentity | undefined;
    try {
      identity = this.identity?.();
    } catch (error) {
      // A caller the cluster cannot be asked as (a system: name) is refused before any read.
      if (error instanceof AppError) throw new ModelConfigListError('forbidden', error);
      throw error;
    }
    const client = await this.client();
    let items: ModelConfigSummary[];
    try {
      const request = { group: MODEL_CONFIG_GROUP, version: MODEL_CONFIG_VERSION, namespace, plural: MODEL_CONFIG_PLURAL };
      const list = (await client.api.listNamespacedCustomObject(request, client.options({ timeoutMs, identity }))) as { items?: RawModelConfig[] };
      items = (list.items ?? []).map(summary).sort((a, b) => a.name.localeCompare(b.name));
    } catch (error) {
      throw classified(error, namespace, timeoutMs, identity);
    }
    if (items.length === 0 && (await this.namespaceMissing(client, namespace, timeoutMs, identity))) {
      throw new ModelConfigListError('no_namespace', new AppError('not_found', `namespace "${namespace}" not found`, [{ path: 'namespace', message: `namespace "${namespace}" not found` }]));
    }
    return items;
  }

  /**
   * Whether the namespace is missing, asked only when it lists no ModelConfig (the API server lists
   * none in a namespace that does not exist): a write there is refused for its namespace, not its
   * modelConfig. A caller who may not read namespaces (most) learns nothing here: not missing.
   */
  private async namespaceMissing(client: Client, namespace: string, timeoutMs: number, identity?: KubeIdentity): Promise<boolean> {
    try {
      await client.core.readNamespace({ name: namespace }, client.options({ timeoutMs, identity }));
      return false;
    } catch (error) {
      return (error as { code?: number }).code === 404;
    }
  }

  private client(): Promise<Client> {
    this.api ??= import('@kubernetes/client-node').then((k8s) => {
      const config = new k8s.KubeConfig();
      if (this.kubeconfig) config.loadFromFile(this.kubeconfig);
      else config.loadFromDefault();
      return { api: config.makeApiClient(k8s.CustomObjectsApi), core: config.makeApiClient(k8s.CoreV1Api), options: (read: { timeoutMs: number; identity?: KubeIdentity }) => readOptions(k8s, read) };
    });
    return this.api.catch((error: unknown) => {
      this.api = undefined;
      throw new ModelConfigListError(
        'unreachable',
        new AppError('backend_error', `the kubeconfig could not be loaded (${(error as Error).message}); set KUBECONFIG to the kubeconfig of the cluster agents are written to`),
      );
    });
  }
}

/** Only the fields agent-manager shows; everything else of the object (its Secret's name included) stays behind. */
function summary(raw: RawModelConfig): ModelConfigSummary {
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : null);
  const conditions = Array.isArray(raw.status?.conditions) ? (raw.status.conditions as Condition[]) : [];
  return {
    name: raw.metadata?.name ?? '',
    provider: text(raw.spec?.provider),
    model: text(raw.spec?.model),
    conditions: conditions
      .filter((c) => typeof c?.type === 'string' && typeof c?.status === 'string')
      .map((c) => ({ type: c.type, status: c.status, ...(typeof c.reason === 'string' ? { reason: c.reason } : {}) })),
  };
}

function classified(error: unknown, namespace: string, timeoutMs: number, identity?: KubeIdentity): ModelConfigListError {
  const code = (error as { code?: number }).code;
  const where = `ModelConfigs (modelconfigs.kagent.dev/${MODEL_CONFIG_VERSION}) in namespace ${namespace}`;
  if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
    return new ModelConfigListError('unreachable', new AppError('backend_error', `the Kubernetes API server did not answer listing ${where} within ${timeoutMs / 1000}s; retry, and check the cluster if it persists`));
  }
  const body = (error as { body?: unknown }).body;
  const detail = typeof body === 'string' ? safeMessage(body) : (error as Error).message;
  if (code === 403) {
    const who = identity ? ` for ${identity.user}` : ' for agent-manager';
    return new ModelConfigListError(
      'forbidden',
      new AppError('forbidden', `the Kubernetes cluster refused listing ${where}${who}: ${detail}; ask a cluster admin for a Role granting list on modelconfigs.kagent.dev in that namespace`),
    );
  }
  if (code === 404) {
    return new ModelConfigListError(
      'no_api',
      new AppError('not_found', `the cluster serves no kagent ModelConfig API (modelconfigs.kagent.dev/${MODEL_CONFIG_VERSION}): install kagent and its CRDs, or ask a cluster admin which kagent version runs there`),
    );
  }
  return new ModelConfigListError('unreachable', new AppError('backend_error', `listing ${where} failed: ${detail}`));
}

function safeMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
