import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';

/**
 * The kagent ModelConfigs every namespace of createNamespace/freshNamespace has: the names the
 * suites' agents use. agent-manager refuses a modelConfig its namespace has no ModelConfig of.
 */
export const TEST_MODEL_CONFIGS = ['default-model-config', 'm', 'm1', 'm2', 'first-model', 'second-model', 'before', 'after', 'labelled-second', 'secret-model-config'] as const;

/** Direct access to the test control plane, for arranging and checking what the service did. */
export class TestCluster {
  readonly core: CoreV1Api;
  readonly objects: CustomObjectsApi;

  /**
   * `dir`: the control plane's state folder (test/cluster/up.sh), which its pids are read from and
   * which stopApiserver / startApiserver act on.
   */
  constructor(
    readonly kubeconfig: string,
    readonly dir?: string,
    private readonly own = false,
  ) {
    const config = new KubeConfig();
    config.loadFromFile(kubeconfig);
    this.core = config.makeApiClient(CoreV1Api);
    this.objects = config.makeApiClient(CustomObjectsApi);
  }

  static fromEnv(): TestCluster {
    const kubeconfig = process.env.TEST_KUBECONFIG;
    if (!kubeconfig) throw new Error('TEST_KUBECONFIG is not set: the cluster project starts the control plane in its global set-up');
    return new TestCluster(kubeconfig, process.env.TEST_CLUSTER_DIR);
  }

  /**
   * A control plane of the suite's own (test/cluster/up.sh into a new folder, about 8 s), for a
   * suite that stops, kills or freezes its API server: suites run in parallel, and the one of
   * the run is shared by every cluster suite. Stop it with stop() in afterAll.
   */
  static async ownControlPlane(): Promise<TestCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'agent-manager-own-cluster-'));
    const { stdout } = await run('bash', [join(process.cwd(), 'test', 'cluster', 'up.sh'), dir], {
      env: { ...process.env, AGENT_MANAGER_CLUSTER_KUBECTL: 'none' },
    });
    const kubeconfig = /export KUBECONFIG=(\S+)/.exec(stdout)?.[1];
    if (!kubeconfig) throw new Error(`test/cluster/up.sh printed no KUBECONFIG: ${stdout}`);
    return new TestCluster(kubeconfig, dir, true);
  }

  /** Stops a control plane of ownControlPlane() and removes its folder; the shared one is left alone. */
  async stop(): Promise<void> {
    if (this.own && this.dir) await run('bash', [join(process.cwd(), 'test', 'cluster', 'down.sh'), this.dir]);
  }

  /** A fresh namespace per test: without a controller-manager, deleted ones stay Terminating. */
  async freshNamespace(prefix = 'am'): Promise<string> {
    const name = `${prefix}-${randomBytes(4).toString('hex')}`;
    await this.createNamespace(name);
    return name;
  }

  /** A namespace of that name with the suites' ModelConfigs (TEST_MODEL_CONFIGS), as a platform would prepare one for agents. */
  async createNamespace(name: string, labels?: Record<string, string>): Promise<void> {
    await this.core.createNamespace({ body: { metadata: { name, ...(labels && { labels }) } } });
    await Promise.all(TEST_MODEL_CONFIGS.map((config) => this.createModelConfig(name, config)));
  }

  /** A kagent ModelConfig (kagent.dev/v1alpha2), its API key in Secret `<name>-key`, with `conditions` set as kagent's controller would. */
  async createModelConfig(namespace: string, name: string, spec: { provider?: string; model?: string } = {}, conditions?: object[]): Promise<void> {
    const body = {
      apiVersion: 'kagent.dev/v1alpha2',
      kind: 'ModelConfig',
      metadata: { name },
      spec: { provider: 'OpenAI', model: 'gpt-4.1-mini', apiKeySecret: `${name}-key`, apiKeySecretKey: 'OPENAI_API_KEY', ...spec },
    };
    const created = (await this.objects.createNamespacedCustomObject({ group: 'kagent.dev', version: 'v1alpha2', namespace, plural: 'modelconfigs', body })) as any;
    if (conditions) {
      await this.objects.replaceNamespacedCustomObjectStatus({ group: 'kagent.dev', version: 'v1alpha2', namespace, plural: 'modelconfigs', name, body: { ...created, status: { conditions } } });
    }
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
    await run('bash', [join(process.cwd(), 'test', 'cluster', 'stop-apiserver.sh'), this.stateDir()]);
  }

  async startApiserver(): Promise<void> {
    await run('bash', [join(process.cwd(), 'test', 'cluster', 'start-apiserver.sh'), this.stateDir()]);
  }

  /** The kube-apiserver's pid (up.sh writes it), for faults that kill or freeze it. */
  async apiserverPid(): Promise<number> {
    return Number((await readFile(join(this.stateDir(), 'apiserver.pid'), 'utf8')).trim());
  }

  private stateDir(): string {
    if (!this.dir) throw new Error('this control plane has no state folder: stopping its API server needs the one up.sh started (TEST_CLUSTER_DIR or ownControlPlane)');
    return this.dir;
  }
}

const run = promisify(execFile);
