export { DEFAULT_HELM_QUEUE_SECONDS, defaultHelmConcurrency, HelmClient } from './helm.client.js';
export type { HelmClientOptions } from './helm.client.js';
export { HelmModule } from './helm.module.js';
export { helmFailure, helmMessage } from './helm-errors.js';
export { resolveHelmBinary } from './helm-binary.js';
export type { HelmPoolStats, HelmPriority } from './helm-pool.js';
export type { ChartSource, HelmVersion, HistoryEntry, ReleaseInfo, ReleaseRef, WriteOptions } from './helm.types.js';
export { HelmReleases } from './helm-releases.js';
export type { ListedRelease, ReleaseRevision } from './helm-releases.js';
