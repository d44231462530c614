import type { HelmClient } from './helm.client.js';
import type { ReleaseRef } from './helm.types.js';

/** One release as `helm list` shows it. */
export interface ListedRelease extends ReleaseRef {
  revision: number;
  status: string;
  /** "<chart name>-<chart version>" */
  chart: string;
}

/** One revision of a release with the values it was applied with (helm history + get values). */
export interface ReleaseRevision {
  revision: number;
  status: string;
  updated: string;
  values: Record<string, unknown>;
}


/**
 * The releases of one chart across the cluster, and their histories: what the reconciler and
 * adoption read. Everything but the listing goes through HelmClient's public methods.
 */
export class HelmReleases {
  constructor(private readonly helm: HelmClient) {}

  /** Every release of the chart named `chartName`, in every namespace and state. */
  async ofChart(chartName: string): Promise<ListedRelease[]> {
    const rows = await this.helm.listAll();
    const prefix = `${chartName}-`;
    return rows
      .filter((row) => row.chart.startsWith(prefix) && /^\d/.test(row.chart.slice(prefix.length)))
      .map((row) => ({ name: row.name, namespace: row.namespace, revision: Number(row.revision), status: row.status, chart: row.chart }));
  }

  /** The release's revisions, oldest first, each with the values it was applied with. */
  async revisions(release: ReleaseRef): Promise<ReleaseRevision[]> {
    const history = await this.helm.history(release);
    const revisions: ReleaseRevision[] = [];
    for (const entry of history.sort((a, b) => a.revision - b.revision)) {
      revisions.push({ revision: entry.revision, status: entry.status, updated: entry.updated, values: await this.helm.getValues(release, entry.revision) });
    }
    return revisions;
  }

  /** The last revision helm shows deployed or superseded (what a stuck upgrade returns to), or null. */
  async lastDeployed(release: ReleaseRef): Promise<number | null> {
    const history = await this.helm.history(release);
    const done = history.filter((e) => e.status === 'deployed' || e.status === 'superseded').map((e) => e.revision);
    return done.length > 0 ? done.reduce((a, b) => Math.max(a, b)) : null;
  }
}
