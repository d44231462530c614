import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

/** Direct access to the test control plane, for arranging and checking what the service did. */
export class TestCluster {
  readonly core: CoreV1Api;
  readonly objects: CustomObjectsApi;

  constructor(readonly kubeconfig: string) {
    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    this.core = config.makeApiClient(CoreV1Api);
    this.objects = config.makeApiClient(CustomObjectsApi);
  }

  static fromEnv(): TestCluster {
    const kubeconfig = process.env.TEST_KUBECONFIG;
    if (!kubeconfig) throw new Error('TEST_KUBECONFIG is not set: the cluster project starts the control plane in its global set-up');
    return new TestCluster(kubeconfig);
  }

  /** A fresh namespace per test: without a controller-manager, deleted ones stay Terminating. */
  async freshNamespace(prefix = 'am'): Promise<string> {
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    await this.core.createNamespace({ body: { metadata: { name } } });
    return name;
  }

  async agent(namespace: string, name: string): Promise<any | null> {
    try {
      return await this.objects.getNamespacedCustomObject({ group: 'kagent.dev', version: 'v1alpha2', namespace, plural: 'agents', name });
    } catch (error) {
      if ((error as { code?: number }).code === 404) return null;
      throw error;
    }
  }

  /**
   * Sets conditions through the status subresource, as kagent's controller would, without
   * status.observedGeneration (markObservedReady sets one).
   */
  async setConditions(namespace: string, name: string, conditions: object[]): Promise<void> {
    await this.writeStatus(namespace, name, () => ({ conditions }));
  }

  /**
   * Writes the whole status as kagent's controller does once it reconciled the Agent's current
   * generation (status.observedGeneration) and found it ready. No controller runs here, so the
   * next write's generation stays unobserved: kagent stopped, as far as the Agent shows.
   */
  async markObservedReady(namespace: string, name: string): Promise<void> {
    const now = new Date().toISOString();
    const conditions = [
      { type: 'Accepted', status: 'True', reason: 'Reconciled', lastTransitionTime: now },
      { type: 'Ready', status: 'True', reason: 'DeploymentReady', lastTransitionTime: now },
    ];
    await this.writeStatus(namespace, name, (current) => ({ observedGeneration: current.metadata.generation, conditions }));
  }

  /** Replaces the Agent's status through the status subresource with what `status` makes of the Agent as it is. */
  private async writeStatus(namespace: string, name: string, status: (current: any) => object): Promise<void> {
    const current = await this.agent(namespace, name);
    await this.objects.replaceNamespacedCustomObjectStatus({
      group: 'kagent.dev',
      version: 'v1alpha2',
      namespace,
      plural: 'agents',
      name,
      body: { ...current, status: status(current) },
    });
  }

  /** Changes the live Agent the way someone with kubectl would, outside agent-manager. */
  async editAgent(namespace: string, name: string, edit: (agent: any) => void): Promise<void> {
    const current = await this.agent(namespace, name);
    edit(current);
    await this.objects.replaceNamespacedCustomObject({ group: 'kagent.dev', version: 'v1alpha2', namespace, plural: 'agents', name, body: current });
  }

  /**
   * Asynchronous on purpose: this process also hosts the app under test, and a blocking call
   * here stalls its keep-alive sockets past their timeout (the next request: ECONNRESET).
   */
  async stopApiserver(): Promise<void> {
    await run('bash', [join(process.cwd(), 'test', 'cluster', 'stop-apiserver.sh'), clusterDir()]);
  }

  async startApiserver(): Promise<void> {
    await run('bash', [join(process.cwd(), 'test', 'cluster', 'start-apiserver.sh'), clusterDir()]);
  }
}

const run = promisify(execFile);

function clusterDir(): string {
  const dir = process.env.TEST_CLUSTER_DIR;
  if (!dir) throw new Error('TEST_CLUSTER_DIR is not set: stopping the apiserver needs the cluster this run started');
  return dir;
}
