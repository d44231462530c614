import { Logger, type OnModuleDestroy } from '@nestjs/common';
import { decodeReleaseData, MANAGED_RELEASE_LABEL, MANAGED_RELEASE_SELECTOR, RELEASE_SECRET_TYPE, releaseSecretName, type ReleaseRef } from '@app/helm';
import { AGENT_GROUP, AGENT_PLURAL, AGENT_VERSION, KubeRest, ListWatch, type ClusterState, type KubeObject, type LiveAgent, type WatchChange } from '@app/kube';

/** A release of the agent chart as its newest revision's Secret holds it (what `helm status` would answer). */
export interface WatchedRelease {
  namespace: string;
  name: string;
  revision: number;
  status: string;
  /** `<chart name>-<chart version>` */
  chart: string;
  /** The user-supplied values (helm's `config`). */
  values: Record<string, unknown>;
  manifest: string;
  /** The highest revision whose status is deployed or superseded (what a stuck write returns to), or null. */
  lastDeployed: number | null;
}

export interface FleetChange {
  kind: 'release' | 'agent';
  namespace: string;
  name: string;
}

export interface FleetStats {
  releases: number;
  agents: number;
  relists: number;
  bytesRead: number;
}

/** The live Agents the view holds: those the agent chart rendered (its name label). */
export const AGENT_SELECTOR = 'app.kubernetes.io/name=agent';

/** What the cache keeps of one revision's Secret: its labels, and the release decoded while it is the newest. */
interface StoredRevision {
  namespace: string;
  release: string;
  revision: number;
  status: string;
  content?: { status: string; chart: string; values: Record<string, unknown>; manifest: string };
}

/** One release's revisions (their statuses, from the labels) and the newest one, decoded. */
interface ReleaseEntry {
  statuses: Map<number, string>;
  newest?: StoredRevision;
}

/**
 * The agent chart's releases and the live Agents, kept in memory from two label-selected watches
 * (reading as the service itself, never impersonating): the release Secrets agent-manager labels
 * (MANAGED_RELEASE_SELECTOR), of which only the newest revision of each release is decoded, and
 * the Agents the chart rendered. Reads and reconcile decisions answer from here instead of
 * starting `helm status` per agent; helm processes are for writes.
 *
 * Nothing starts it but its owner (`start`); it stops with the module.
 */
export class FleetView implements OnModuleDestroy {
  private readonly logger = new Logger('FleetView');
  private readonly releases = new Map<string, ReleaseEntry>();
  private readonly listeners = new Set<(change: FleetChange) => void>();
  /** Releases whose newest revision's Secret went away while older ones stayed: that older one is read once. */
  private readonly fetching = new Set<string>();
  /**
   * Releases whose newest labelled revision is superseded: a newer revision lacks the label (a
   * rollback to a revision written before agent-manager labelled releases copies that revision's
   * labels). They are labelled once the list is complete, so the view catches up by itself.
   */
  private readonly unlabelled = new Set<string>();
  private labelling: Promise<void> | undefined;
  private rest: Promise<KubeRest> | undefined;
  private secrets: ListWatch<StoredRevision> | undefined;
  private agents: ListWatch<LiveAgent> | undefined;
  private stopping: AbortController | undefined;

  constructor(
    private readonly cluster: ClusterState,
    private readonly kubeconfig?: string,
  ) {}

  /**
   * Starts both watches over `namespaces` (WATCH_NAMESPACES; empty: the whole cluster). A second
   * call while running does nothing; without a configured cluster nothing starts.
   */
  start(namespaces: readonly string[] = []): void {
    if (this.secrets || !this.cluster.configuration().configured) return;
    this.stopping = new AbortController();
    const onError = (message: string): void => this.logger.warn(message);
    this.secrets = new ListWatch<StoredRevision>(() => this.api(), {
      collection: { apiPath: '/api/v1', plural: 'secrets' },
      namespaces,
      labelSelector: MANAGED_RELEASE_SELECTOR,
      fieldSelector: `type=${RELEASE_SECRET_TYPE}`,
      transform: (secret) => this.revisionOf(secret),
      onError,
    });
    this.agents = new ListWatch<LiveAgent>(() => this.api(), {
      collection: { apiPath: `/apis/${AGENT_GROUP}/${AGENT_VERSION}`, plural: AGENT_PLURAL },
      namespaces,
      labelSelector: AGENT_SELECTOR,
      transform: liveAgentOf,
      onError,
    });
    this.secrets.onChange((change) => this.revisionChanged(change));
    this.agents.onChange((change) => this.emit({ kind: 'agent', namespace: change.namespace, name: change.name }));
    this.secrets.start();
    this.agents.start();
  }

  /** Ends both watches (their requests are aborted, not waited for); the view can be started again. */
  async stop(): Promise<void> {
    this.stopping?.abort();
    // The Kubernetes client may still be loading: a module loaded after the app closed would outlive it.
    await this.rest?.catch(() => undefined);
    await Promise.all([this.secrets?.stop(), this.agents?.stop()]);
    this.secrets = this.agents = undefined;
    await this.labelling;
    this.releases.clear();
    this.fetching.clear();
    this.unlabelled.clear();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  /** Both watches listed and watching, and no release waiting for its newest revision to be read or labelled. */
  get synced(): boolean {
    return !!this.secrets?.synced && !!this.agents?.synced && this.fetching.size === 0 && this.unlabelled.size === 0;
  }

  /** True once synced; false after `timeoutMs` or when not started. */
  async whenSynced(timeoutMs: number): Promise<boolean> {
    if (!this.secrets || !this.agents) return false;
    const deadline = Date.now() + timeoutMs;
    const [secrets, agents] = await Promise.all([this.secrets.whenSynced(timeoutMs), this.agents.whenSynced(timeoutMs)]);
    while (secrets && agents && !this.synced && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    return this.synced;
  }

  /** The labelled release's newest revision, or null when the view holds none (meaningful when synced). */
  release(ref: ReleaseRef): WatchedRelease | null {
    const entry = this.releases.get(key(ref.namespace, ref.name));
    const newest = entry?.newest;
    if (!entry || !newest?.content) return null;
    const { chart, values, manifest, status } = newest.content;
    const deployed = [...entry.statuses].filter(([, s]) => s === 'deployed' || s === 'superseded').map(([revision]) => revision);
    return {
      namespace: ref.namespace,
      name: ref.name,
      revision: newest.revision,
      status,
      chart,
      values,
      manifest,
      lastDeployed: deployed.length > 0 ? Math.max(...deployed) : null,
    };
  }

  agent(ref: ReleaseRef): LiveAgent | null {
    return this.agents?.get(ref.namespace, ref.name) ?? null;
  }

  /** Every release and every live Agent the view holds, each once. */
  keys(): ReleaseRef[] {
    const seen = new Set(this.releases.keys());
    for (const agent of this.agents?.values() ?? []) seen.add(key(agent.metadata.namespace, agent.metadata.name));
    return [...seen].map((id) => {
      const [namespace, name] = split(id);
      return { namespace, name };
    });
  }

  /** Called after the view changed (a release's revision or status, a live Agent; deletions too); returns the unsubscribe. */
  onChange(listener: (change: FleetChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stats(): FleetStats {
    const secrets = this.secrets?.stats;
    const agents = this.agents?.stats;
    return {
      releases: this.releases.size,
      agents: agents?.objects ?? 0,
      relists: (secrets?.relists ?? 0) + (agents?.relists ?? 0),
      bytesRead: (secrets?.bytesRead ?? 0) + (agents?.bytesRead ?? 0),
    };
  }

  /**
   * Labels every revision Secret of a release written before agent-manager labelled its releases
   * (a metadata patch each, as the service itself), so the watch selects it. helm copies labels
   * forward on upgrade and rollback, so a release labelled throughout stays labelled. Answers
   * how many Secrets it labelled.
   */
  async labelRelease(ref: ReleaseRef): Promise<number> {
    const rest = await this.api();
    const signal = AbortSignal.any([AbortSignal.timeout(60_000), ...(this.stopping ? [this.stopping.signal] : [])]);
    const path = `/api/v1/namespaces/${encodeURIComponent(ref.namespace)}/secrets`;
    const selector = { labelSelector: `owner=helm,name=${ref.name}`, fieldSelector: `type=${RELEASE_SECRET_TYPE}` };
    const { value } = await rest.json<{ items: KubeObject[] }>('GET', path, selector, signal);
    const unlabelled = value.items.filter((secret) => secret.metadata.labels?.[MANAGED_RELEASE_LABEL] !== 'true');
    const patch = { contentType: 'application/merge-patch+json', text: JSON.stringify({ metadata: { labels: { [MANAGED_RELEASE_LABEL]: 'true' } } }) };
    for (const secret of unlabelled) await rest.json('PATCH', `${path}/${encodeURIComponent(secret.metadata.name)}`, {}, signal, patch);
    return unlabelled.length;
  }

  private api(): Promise<KubeRest> {
    this.rest ??= KubeRest.load(this.kubeconfig).catch((error: unknown) => {
      this.rest = undefined;
      throw error;
    });
    return this.rest;
  }

  /** A revision's Secret as the cache keeps it: the labels, and the release decoded when it is the newest revision seen. */
  private revisionOf(secret: KubeObject): StoredRevision | undefined {
    const labels = secret.metadata.labels ?? {};
    const revision = Number(labels.version);
    const release = labels.name;
    const namespace = secret.metadata.namespace ?? '';
    if (!release || !Number.isInteger(revision)) return undefined;
    const stored: StoredRevision = { namespace, release, revision, status: labels.status ?? 'unknown' };
    const newest = this.releases.get(key(namespace, release))?.newest;
    if (!newest || newest.revision <= revision) stored.content = this.decode(secret);
    return stored;
  }

  private decode(secret: KubeObject): StoredRevision['content'] {
    const data = (secret.data as { release?: string } | undefined)?.release;
    try {
      if (!data) throw new Error('it has no release key');
      const release = decodeReleaseData(data);
      const chart = release.chart?.metadata;
      return { status: release.info.status, chart: chart ? `${chart.name}-${chart.version}` : '', values: release.config ?? {}, manifest: release.manifest ?? '' };
    } catch (error) {
      this.logger.warn(`Secret ${secret.metadata.namespace}/${secret.metadata.name} is not a helm release it can read (${(error as Error).message}); the release is left out of the view`);
      return undefined;
    }
  }

  private revisionChanged(change: WatchChange<StoredRevision>): void {
    const stored = change.value;
    const id = key(stored.namespace, stored.release);
    const entry = this.releases.get(id) ?? { statuses: new Map<number, string>() };
    this.releases.set(id, entry);
    if (change.type === 'upsert') {
      entry.statuses.set(stored.revision, stored.status);
      if (stored.content && (!entry.newest || entry.newest.revision <= stored.revision)) {
        // Only the newest revision stays decoded: the cache holds labels for the others.
        if (entry.newest && entry.newest !== stored) entry.newest.content = undefined;
        entry.newest = stored;
      }
    } else {
      entry.statuses.delete(stored.revision);
      if (entry.newest?.revision === stored.revision) entry.newest = undefined;
      if (entry.statuses.size === 0) this.releases.delete(id);
      else if (!entry.newest) this.readNewest(stored.namespace, stored.release);
    }
    if (entry.newest?.content?.status === 'superseded') this.labelLater(id);
    this.emit({ kind: 'release', namespace: stored.namespace, name: stored.release });
  }

  /** The newest revision's Secret went away and older ones stayed (deleted by hand): reads the newest left once. */
  private readNewest(namespace: string, release: string): void {
    const id = key(namespace, release);
    if (this.fetching.has(id)) return;
    this.fetching.add(id);
    const signal = AbortSignal.any([this.stopping?.signal ?? new AbortController().signal, AbortSignal.timeout(30_000)]);
    const read = async (): Promise<void> => {
      const entry = this.releases.get(id);
      if (!entry || entry.newest) return;
      const revision = Math.max(...entry.statuses.keys());
      const rest = await this.api();
      const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/secrets/${encodeURIComponent(releaseSecretName(release, revision))}`;
      const { value } = await rest.json<KubeObject>('GET', path, {}, signal);
      const content = this.decode(value);
      const now = this.releases.get(id);
      if (content && now && !now.newest && Math.max(...now.statuses.keys()) === revision) {
        now.newest = { namespace, release, revision, status: now.statuses.get(revision) ?? content.status, content };
      }
    };
    read()
      .catch((error: unknown) => this.logger.warn(`reading release ${namespace}/${release}'s newest revision failed: ${(error as Error).message}`))
      .finally(() => {
        this.fetching.delete(id);
        this.emit({ kind: 'release', namespace, name: release });
      });
  }

  private labelLater(id: string): void {
    this.unlabelled.add(id);
    this.labelling ??= this.labelUnlabelled().finally(() => (this.labelling = undefined));
  }

  /** Labels the releases of `unlabelled` once the Secret watch has listed (in a list's name order, v1 comes before v10). */
  private async labelUnlabelled(): Promise<void> {
    while (this.unlabelled.size > 0) {
      if (this.stopping?.signal.aborted !== false) return;
      if (!(await this.secrets?.whenSynced(60_000))) continue;
      for (const id of [...this.unlabelled]) {
        this.unlabelled.delete(id);
        if (this.releases.get(id)?.newest?.content?.status !== 'superseded') continue;
        const [namespace, name] = split(id);
        try {
          const labelled = await this.labelRelease({ namespace, name });
          // None: the newest revision's Secret was deleted by hand, and the one before it is the release as helm shows it too.
          if (labelled > 0) this.logger.log(`release ${id}: its newest revisions lacked ${MANAGED_RELEASE_LABEL} (a rollback to a revision written before agent-manager labelled releases); labelled ${labelled} Secret(s)`);
        } catch (error) {
          this.logger.warn(`release ${id}: its newest revisions lack ${MANAGED_RELEASE_LABEL} and labelling them failed (${(error as Error).message}); the view shows an older revision until they are labelled`);
        }
      }
    }
  }

  private emit(change: FleetChange): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch (error) {
        this.logger.error(`a listener of the fleet view failed: ${(error as Error).message}`);
      }
    }
  }
}

/** The parts of an Agent status and drift reads use; managedFields and the rest are not kept. */
function liveAgentOf(object: KubeObject): LiveAgent {
  const { name, namespace, labels } = object.metadata;
  const metadata = object.metadata as LiveAgent['metadata'];
  return {
    metadata: { name, namespace: namespace ?? '', generation: metadata.generation, labels, annotations: metadata.annotations },
    spec: (object.spec as Record<string, unknown>) ?? {},
    ...(object.status ? { status: object.status as LiveAgent['status'] } : {}),
  };
}

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function split(id: string): [string, string] {
  const at = id.indexOf('/');
  return [id.slice(0, at), id.slice(at + 1)];
}
