export interface HelmVersion {
  /** As helm prints it, e.g. "v4.1.4". */
  version: string;
  major: number;
}

export interface ReleaseRef {
  namespace: string;
  name: string;
}

export interface ChartSource {
  /** Anything helm accepts as a chart: a path, repo/name or oci:// reference. */
  ref: string;
  version?: string;
}

export interface ReleaseInfo {
  name: string;
  namespace: string;
  revision: number;
  status: string;
  description: string;
  chart?: string;
  /** The user-supplied values of this revision (helm's `config`; what `get values` shows). */
  values: Record<string, unknown>;
  /** The manifest helm applied for this revision. */
  manifest: string;
}

export interface HistoryEntry {
  revision: number;
  updated: string;
  status: string;
  chart: string;
  app_version: string;
  description: string;
}

export interface WriteOptions {
  wait?: boolean;
  timeoutSeconds?: number;
}
