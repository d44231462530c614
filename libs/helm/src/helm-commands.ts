import type { ChartSource, ReleaseRef } from './helm.types.js';
import { MANAGED_RELEASE_LABEL } from './release-storage.js';

/** What a create's or an update's one helm process is given. */
export interface WriteCommand {
  release: ReleaseRef;
  chart: ChartSource;
  /** The values file (every value: the chart's are reset, not reused). */
  valuesFile: string;
  /** helm's major version: 4 spells atomic writes and server-side apply differently from 3. */
  major: number;
  wait: boolean;
  timeoutSeconds: number;
}

/**
 * A create: `helm install`, which itself refuses a release name in use. The release it recorded
 * (its manifest included) comes back as JSON, so no second helm process is needed. The benchmark
 * runs this same command bare to tell the service's own cost from its flags'.
 */
export function installArgs(command: WriteCommand): string[] {
  const { release, chart, valuesFile } = command;
  return ['install', release.name, chart.ref, '--namespace', release.namespace, '--values', valuesFile, ...writeFlags(command), ...versionArgs(chart)];
}

/** An update (or a create over an uninstalled release): `helm upgrade --install` with every value reset to the file's. */
export function upgradeInstallArgs(command: WriteCommand): string[] {
  const { release, chart, valuesFile } = command;
  return ['upgrade', release.name, chart.ref, '--install', '--namespace', release.namespace, '--values', valuesFile, '--reset-values', ...writeFlags(command), ...versionArgs(chart)];
}

/**
 * Undo a failed write (helm 4 renamed --atomic). A write returns once applied and status reports
 * readiness, so it waits for the Agent only when asked (the status watcher). Otherwise helm 4
 * gets helm 3's waiter (`legacy`, what --atomic uses there), which takes a custom resource as
 * ready once applied: with --rollback-on-failure helm 4 turns `hookOnly` into the watcher, which
 * waits for kagent to observe the Agent's new generation, so with kagent down or slow every write
 * waited HELM_TIMEOUT_SECONDS, rolled back and left the release pending. On helm 4's server-side
 * apply, take back fields someone changed outside agent-manager: the agent's record is the truth.
 */
function writeFlags({ major, wait, timeoutSeconds }: WriteCommand): string[] {
  const apply = major >= 4 ? ['--rollback-on-failure', '--force-conflicts', `--wait=${wait ? 'watcher' : 'legacy'}`] : ['--atomic', ...(wait ? ['--wait'] : [])];
  return [...apply, ...MANAGED_LABEL_ARGS, '--timeout', `${timeoutSeconds}s`, '--output', 'json'];
}

/**
 * The release's own label (helm 3.13+ and 4 write it onto every revision's Secret; an upgrade keeps
 * the labels of the revision before it, a rollback copies those of the revision it returns to), which
 * the fleet's watches select agent releases by.
 */
const MANAGED_LABEL_ARGS = ['--labels', `${MANAGED_RELEASE_LABEL}=true`];

export function versionArgs(chart: ChartSource): string[] {
  return chart.version ? ['--version', chart.version] : [];
}

/**
 * `helm pull`: the chart unpacked into `destination` (a folder of its own, named as the chart);
 * `--plain-http` for a registry served over http (AGENT_CHART_PLAIN_HTTP).
 */
export function pullArgs(chart: ChartSource, destination: string, options: { plainHttp?: boolean } = {}): string[] {
  return ['pull', chart.ref, ...versionArgs(chart), '--untar', '--destination', destination, ...(options.plainHttp ? ['--plain-http'] : [])];
}
