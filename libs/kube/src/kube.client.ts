import type { ConfigurationOptions, CoreV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { AppError, type KubeIdentity } from '@app/common';
import { Tracing, type Metrics } from '@app/telemetry';
import type { ClusterState } from './cluster-state.js';
import { readOptions } from './impersonation.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

/** An object's owner as its metadata names it (a Flux HelmRelease may own what it applies). */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
  controller?: boolean;
}

/** The live kagent Agent as the API server holds it. */
export interface LiveAgent {
  metadata: { name: string; namespace: string; generation?: number; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: OwnerReference[] };
  spec: Record<string, unknown>;
  status?: { conditions?: Condition[]; observedGeneration?: number };
}

/** A kagent object with its metadata and status as the API server holds them. */
export interface LiveObject {
  metadata: { name: string; namespace: string; generation?: number; labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: OwnerReference[] };
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** Where a kind of kagent object is served. */
export interface KagentKind {
  group: string;
  version: string;
  plural: string;
}

export const KAGENT_KINDS = {
  agent: { group: 'kagent.dev', version: 'v1alpha2', plural: 'agents' },
  agentTemplate: { group: 'kagent.dev', version: 'v1alpha3', plural: 'agenttemplates' },
  remoteMcpServer: { group: 'kagent.dev', version: 'v1alpha2', plural: 'remotemcpservers' },
} as const satisfies Record<string, KagentKind>;

export const AGENT_GROUP = 'kagent.dev';
export const AGENT_VERSION = 'v1alpha2';
export const AGENT_PLURAL = 'agents';
/** See KubeClient's readTimeoutMs. */
export const KUBE_READ_TIMEOUT_MS = 15_000;

/** A Secret as a list answers it: metadata and base64 data. */
export interface SecretObject {
  metadata: { name: string; namespace: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

interface Client {
  api: CustomObjectsApi;
  core: CoreV1Api;
  /** The call options of one read: its timeout, and the caller it impersonates. */
  options(read: { timeoutMs: number; identity?: KubeIdentity }): ConfigurationOptions;
}

/**
 * Reads kagent objects from the cluster helm writes to (the same kubeconfig), and a release's Secrets
 * (who owns the release, read before each write). Never writes.
 * The Kubernetes client (a large import) loads on the first read, not at start. With `identity`
 * (KUBE_IMPERSONATE) each read impersonates the caller it returns, as helm's runs do.
 */
export class KubeClient {
  private api: Promise<Client> | undefined;

  constructor(
    private readonly cluster: ClusterState,
    private readonly kubeconfig?: string,
    private readonly identity?: () => KubeIdentity | undefined,
    private readonly metrics?: Metrics,
    /** How long one read may wait for the API server: one that never answers held a status read, the recovery sweep (and its lock on the agent) and shutdown for good. */
    private readonly readTimeoutMs = KUBE_READ_TIMEOUT_MS,
  ) {}

  /** The live Agent, or null when the cluster has none of that name; a span and a duration sample per read. */
  getAgent(namespace: string, name: string): Promise<LiveAgent | null> {
    return measured(this.metrics, 'get', { group: AGENT_GROUP, plural: AGENT_PLURAL }, namespace, () => this.readAgent(namespace, name));
  }

  private async readAgent(namespace: string, name: string): Promise<LiveAgent | null> {
    const problem = await this.cluster.problem();
    if (problem) throw new AppError('backend_error', problem);
    const identity = this.identity?.();
    const client = await this.client();
    try {
      const request = { group: AGENT_GROUP, version: AGENT_VERSION, namespace, plural: AGENT_PLURAL, name };
      return (await client.api.getNamespacedCustomObject(request, client.options({ timeoutMs: this.readTimeoutMs, identity }))) as LiveAgent;
    } catch (error) {
      const code = (error as { code?: number }).code;
      if (code === 404) return null;
      if ((error as Error).name === 'TimeoutError' || (error as Error).name === 'AbortError') {
        throw new AppError('backend_error', `the Kubernetes API server did not answer reading Agent ${namespace}/${name} within ${this.readTimeoutMs / 1000}s; retry, and check the cluster if it persists`);
      }
      const body = (error as { body?: unknown }).body;
      const detail = typeof body === 'string' ? safeMessage(body) : (error as Error).message;
      if (code === 403 && identity) {
        throw new AppError('forbidden', `the Kubernetes cluster refused reading Agent ${namespace}/${name} for ${identity.user}: ${detail}; ask a cluster admin for a RoleBinding that grants it in that namespace`);
      }
      throw new AppError('backend_error', `reading Agent ${namespace}/${name} from the cluster failed: ${detail}`);
    }
  }

  /**
   * Any namespaced kagent object (an AgentTemplate, a RemoteMCPServer), or null when there is none
   * of that name; read as the current caller, like getAgent.
   */
  async getObject<T = LiveObject>(kind: KagentKind, namespace: string, name: string): Promise<T | null> {
    const problem = await this.cluster.problem();
    if (problem) throw new AppError('backend_error', problem);
    const identity = this.identity?.();
    const client = await this.client();
    try {
      return (await client.api.getNamespacedCustomObject({ ...kind, namespace, name }, client.options({ timeoutMs: this.readTimeoutMs, identity }))) as T;
    } catch (error) {
      if ((error as { code?: number }).code === 404) return null;
      throw new AppError('backend_error', `reading ${kind.plural}.${kind.group}/${kind.version} ${namespace}/${name} from the cluster failed: ${describe(error)}`);
    }
  }

  /** A JSON merge patch of a kagent object's metadata or spec (gone: nothing to do), as the current caller. */
  async patchObject(kind: KagentKind, namespace: string, name: string, patch: object): Promise<void> {
    const problem = await this.cluster.problem();
    if (problem) throw new AppError('backend_error', problem);
    const identity = this.identity?.();
    const client = await this.client();
    const k8s = await import('@kubernetes/client-node');
    try {
      await client.api.patchNamespacedCustomObject({ ...kind, namespace, name, body: patch }, k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch, client.options({ timeoutMs: this.readTimeoutMs, identity })));
    } catch (error) {
      if ((error as { code?: number }).code === 404) return;
      throw new AppError('backend_error', `patching ${kind.plural}.${kind.group}/${kind.version} ${namespace}/${name} failed: ${describe(error)}`);
    }
  }

  /** Deletes a kagent object (gone already: nothing to do), as the current caller. */
  async deleteObject(kind: KagentKind, namespace: string, name: string): Promise<void> {
    const problem = await this.cluster.problem();
    if (problem) throw new AppError('backend_error', problem);
    const identity = this.identity?.();
    const client = await this.client();
    try {
      await client.api.deleteNamespacedCustomObject({ ...kind, namespace, name }, client.options({ timeoutMs: this.readTimeoutMs, identity }));
    } catch (error) {
      if ((error as { code?: number }).code === 404) return;
      throw new AppError('backend_error', `deleting ${kind.plural}.${kind.group}/${kind.version} ${namespace}/${name} failed: ${describe(error)}`);
    }
  }

  /**
   * The Secrets of a namespace a label selector picks (a helm release's revisions: `owner=helm,name=<release>`),
   * read as the current caller, as helm reads them.
   */
  async listSecrets(namespace: string, labelSelector: string): Promise<SecretObject[]> {
    const problem = await this.cluster.problem();
    if (problem) throw new AppError('backend_error', problem);
    const identity = this.identity?.();
    const client = await this.client();
    try {
      const list = await client.core.listNamespacedSecret({ namespace, labelSelector }, client.options({ timeoutMs: this.readTimeoutMs, identity }));
      return list.items as SecretObject[];
    } catch (error) {
      if ((error as { code?: number }).code === 403 && identity) {
        throw new AppError('forbidden', `the Kubernetes cluster refused listing Secrets in ${namespace} for ${identity.user}: ${describe(error)}; ask a cluster admin for a RoleBinding that grants it (helm needs it too)`);
      }
      throw new AppError('backend_error', `listing Secrets (${labelSelector}) in ${namespace} failed: ${describe(error)}`);
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
      throw new AppError('backend_error', `the kubeconfig could not be loaded (${(error as Error).message}); set KUBECONFIG to the kubeconfig of the cluster agents are written to`);
    });
  }
}

/** A read or write of the cluster in a client span, with a duration sample by verb, resource and outcome. */
export async function measured<T>(metrics: Metrics | undefined, verb: string, kind: Pick<KagentKind, 'group' | 'plural'>, namespace: string, call: () => Promise<T>): Promise<T> {
  const attributes = { 'k8s.namespace.name': namespace, 'k8s.resource': `${kind.plural}.${kind.group}`, 'k8s.verb': verb };
  const started = process.hrtime.bigint();
  let outcome = 'ok';
  try {
    return await Tracing.span(`kube ${verb} ${kind.plural}`, { kind: 'client', attributes }, call);
  } catch (error) {
    outcome = error instanceof AppError ? error.code : 'failed';
    throw error;
  } finally {
    metrics?.kubeRequest(verb, kind.plural, outcome, Number(process.hrtime.bigint() - started) / 1e9);
  }
}

function describe(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  return typeof body === 'string' ? safeMessage(body) : (error as Error).message;
}

function safeMessage(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}
