import { AppError } from '@app/common';
import { HelmClient, type ChartSource, type HistoryEntry, type ReleaseInfo, type ReleaseRef } from '@app/helm';

/**
 * A FAKE helm: it records the calls the pipeline makes and keeps releases in memory, so these
 * tests check the pipeline's own decisions (order, locks, journal, refusals) in milliseconds.
 * The real helm against a real API server is the cluster suites' job.
 */
export class FakeHelm extends HelmClient {
  readonly calls: string[] = [];
  readonly releases = new Map<string, ReleaseInfo>();
  /** Every revision of each release, oldest first (the current one is also in `releases`). */
  readonly revisions = new Map<string, ReleaseInfo[]>();
  /** The next cluster write fails with this error, once. */
  failNext?: AppError;
  /** How long each cluster write takes. */
  delayMs = 0;

  constructor() {
    super({ bin: 'fake-helm', timeoutSeconds: 1 });
  }

  override async template(release: ReleaseRef): Promise<string> {
    this.calls.push(`template ${release.name}`);
    return `kind: Agent\nmetadata:\n  name: ${release.name}\n`;
  }

  override async install(release: ReleaseRef, _chart: ChartSource, values: object): Promise<ReleaseInfo> {
    await this.cluster(`install ${release.name}`);
    const key = `${release.namespace}/${release.name}`;
    if (this.releases.has(key)) throw new AppError('conflict', `a helm release ${key} already exists that agent-manager does not manage`);
    return this.deploy(release, values);
  }

  override async upgradeInstall(release: ReleaseRef, _chart: ChartSource, values: object): Promise<ReleaseInfo> {
    await this.cluster(`upgrade ${release.name}`);
    return this.deploy(release, values);
  }

  override async uninstall(release: ReleaseRef): Promise<boolean> {
    await this.cluster(`uninstall ${release.name}`);
    return this.releases.delete(`${release.namespace}/${release.name}`);
  }

  override async status(release: ReleaseRef, revision?: number): Promise<ReleaseInfo | null> {
    this.calls.push(`status ${release.name}`);
    const key = `${release.namespace}/${release.name}`;
    if (revision !== undefined) return this.revisions.get(key)?.find((info) => info.revision === revision) ?? null;
    return this.releases.get(key) ?? null;
  }

  override async history(release: ReleaseRef): Promise<HistoryEntry[]> {
    this.calls.push(`history ${release.name}`);
    const key = `${release.namespace}/${release.name}`;
    const current = this.releases.get(key);
    return (this.revisions.get(key) ?? []).map((info) => ({
      revision: info.revision, updated: '', status: info.revision === current?.revision ? current.status : 'superseded', chart: 'agent', app_version: '', description: '',
    }));
  }

  /** Like helm: a rollback is a new revision with the values of the one rolled back to. */
  override async rollback(release: ReleaseRef, revision: number): Promise<void> {
    await this.cluster(`rollback ${release.name}`);
    const target = this.revisions.get(`${release.namespace}/${release.name}`)?.find((info) => info.revision === revision);
    if (!target) throw new AppError('backend_error', `helm rollback failed: release has no revision ${revision}`);
    this.deploy(release, target.values);
  }

  /** Sets the release as a helm run left it (a status such as pending-upgrade), as a new revision. */
  hold(release: ReleaseRef, status: string, values: object): ReleaseInfo {
    const info = this.deploy(release, values);
    info.status = status;
    return info;
  }

  private async cluster(call: string): Promise<void> {
    this.calls.push(call);
    if (this.delayMs) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    const failure = this.failNext;
    this.failNext = undefined;
    if (failure) throw failure;
  }

  private deploy(release: ReleaseRef, values: object): ReleaseInfo {
    const key = `${release.namespace}/${release.name}`;
    const revision = (this.releases.get(key)?.revision ?? 0) + 1;
    const info = { ...release, revision, status: 'deployed', description: '', values: JSON.parse(JSON.stringify(values)), manifest: `kind: Agent # r${revision}` };
    this.releases.set(key, info);
    this.revisions.set(key, [...(this.revisions.get(key) ?? []), info]);
    return info;
  }
}
