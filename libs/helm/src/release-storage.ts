import { gunzipSync, gzipSync } from 'node:zlib';

/**
 * helm's storage of a release in a Kubernetes Secret (its default driver, helm 3 and 4): one
 * Secret per revision, named `sh.helm.release.v1.<release>.v<revision>`, of type
 * `helm.sh/release.v1`, labelled `owner=helm`, `name`, `status`, `version` (plus the release's
 * custom labels, `helm install --labels`), whose `release` key holds base64(gzip(JSON)) of the
 * release. Reading it in-process answers what `helm status` answers without starting helm.
 */
export const RELEASE_SECRET_TYPE = 'helm.sh/release.v1';

/**
 * The custom label agent-manager writes on every release of an agent (`helm install|upgrade
 * --labels`), which helm puts on the release's Secrets: what watches select agent releases by,
 * instead of listing every release of every chart in the cluster.
 */
export const MANAGED_RELEASE_LABEL = 'agent-manager.giantswarm.io/managed';
export const MANAGED_RELEASE_SELECTOR = `owner=helm,${MANAGED_RELEASE_LABEL}=true`;

const GZIP_MAGIC = [0x1f, 0x8b, 0x08];

/** The parts of helm's release JSON agent-manager reads. */
export interface StoredRelease {
  name: string;
  namespace: string;
  version: number;
  info: { status: string; description?: string; first_deployed?: string; last_deployed?: string; deleted?: string };
  chart: { metadata: { name: string; version: string; appVersion?: string } };
  /** The user-supplied values (what `helm get values` shows). */
  config?: Record<string, unknown> | null;
  manifest?: string;
}

/** The Secret's name for one revision of a release. */
export function releaseSecretName(release: string, revision: number): string {
  return `sh.helm.release.v1.${release}.v${revision}`;
}

/**
 * The release in a Secret's `release` key: `data` is the key's bytes as the API server sends
 * them in a Secret's `data` (base64 of helm's own base64 text). Throws on anything else.
 */
export function decodeReleaseData(data: string): StoredRelease {
  const text = Buffer.from(Buffer.from(data, 'base64').toString('latin1'), 'base64');
  const json = text.length > 3 && GZIP_MAGIC.every((byte, i) => text[i] === byte) ? gunzipSync(text) : text;
  const release = JSON.parse(json.toString('utf8')) as StoredRelease;
  if (typeof release?.name !== 'string' || typeof release.version !== 'number' || typeof release.info?.status !== 'string') {
    throw new Error('not a helm release (no name, version or info.status)');
  }
  return release;
}

/** A release as helm stores it, in the form a Secret's `data.release` takes through the API (the inverse of decodeReleaseData). */
export function encodeReleaseData(release: StoredRelease | Record<string, unknown>): string {
  const helmText = gzipSync(Buffer.from(JSON.stringify(release), 'utf8')).toString('base64');
  return Buffer.from(helmText, 'latin1').toString('base64');
}
