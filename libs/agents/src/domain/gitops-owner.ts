/**
 * Who else manages a release: a GitOps tool that applies it from git (Flux's helm-controller, Argo
 * CD) and would undo, or fight over, any write agent-manager made to it (docs/contract.md §13).
 * Pure: given the metadata found on the release and its live object, the owner or null. Read on
 * every write, never kept: the owner can appear (or go) at any time.
 */

/** The metadata of one object as the API server holds it (or as a manifest renders it). */
export interface ObjectMetadata {
  labels?: Record<string, string> | null;
  annotations?: Record<string, string> | null;
  ownerReferences?: { apiVersion?: string; kind?: string; name?: string }[] | null;
}

/** Where the owner was read from, for the message. */
export type EvidenceSource = 'live object' | 'release' | 'release manifest';

/** What a write finds about its release: the newest release Secret's metadata, the object its manifest renders, the live object. */
export interface OwnerEvidence {
  namespace: string;
  /** The release's (and the agent's) name. */
  name: string;
  /** The live Agent (or AgentTemplate) as the API server holds it; null when there is none. */
  live?: ObjectMetadata | null;
  /** The newest release Secret's labels and annotations; null when helm holds no release. */
  release?: ObjectMetadata | null;
  /** The agent object in the release's manifest (what helm applied, after any post-renderer); null when none. */
  manifest?: ObjectMetadata | null;
}

/** The GitOps object that owns a release. */
export interface GitopsOwner {
  tool: 'Flux' | 'Argo CD';
  kind: 'HelmRelease' | 'Application';
  apiVersion: string;
  /** The owner's namespace; null when the evidence does not say (an Argo CD Application in Argo CD's own namespace). */
  namespace: string | null;
  /** The owner's name; null when the evidence names none (a Flux key without `helm.toolkit.fluxcd.io/name`). */
  name: string | null;
  /** Where it was seen, and the key that says so. */
  seenOn: EvidenceSource;
  key: string;
}

/** Flux's helm-controller labels every object it applies with `<group>/name` and `<group>/namespace` of its HelmRelease (its origin-labels post-renderer). */
export const FLUX_GROUP = 'helm.toolkit.fluxcd.io';
export const FLUX_NAME = `${FLUX_GROUP}/name`;
export const FLUX_NAMESPACE = `${FLUX_GROUP}/namespace`;
/** Argo CD's annotation tracking (the default since Argo CD 3.0): `<app>:<group>/<kind>:<namespace>/<name>`, `<app>` being `<namespace>_<name>` for an Application outside Argo CD's own namespace. */
export const ARGO_TRACKING_ID = 'argocd.argoproj.io/tracking-id';
/** Argo CD's label tracking (the default before 3.0, and with annotation+label): the Application's name. Helm charts set the same label to the release's name. */
export const ARGO_INSTANCE_LABEL = 'app.kubernetes.io/instance';

const SOURCES: readonly (keyof Pick<OwnerEvidence, 'live' | 'release' | 'manifest'>)[] = ['live', 'release', 'manifest'];
const SOURCE_NAMES: Record<(typeof SOURCES)[number], EvidenceSource> = { live: 'live object', release: 'release', manifest: 'release manifest' };

/**
 * The GitOps owner of the release `evidence` describes, or null. The live object is asked first
 * (what the tool applied last), then the release Secret, then the release's manifest. Per object:
 * Flux's labels, then Flux's keys as annotations, then an ownerReference to a HelmRelease, then Argo
 * CD's tracking-id annotation, then Argo CD's instance label, which counts only when it differs from
 * the release's name: the agent chart sets it to the release name itself, as every Helm chart does.
 */
export function gitopsOwner(evidence: OwnerEvidence): GitopsOwner | null {
  for (const source of SOURCES) {
    const metadata = evidence[source];
    if (!metadata) continue;
    const owner = ownerIn(metadata, evidence, SOURCE_NAMES[source]);
    if (owner) return owner;
  }
  return null;
}

function ownerIn(metadata: ObjectMetadata, { namespace, name }: OwnerEvidence, seenOn: EvidenceSource): GitopsOwner | null {
  const flux = { tool: 'Flux', kind: 'HelmRelease', apiVersion: `${FLUX_GROUP}/v2`, seenOn } as const;
  for (const [where, keys] of [['label', metadata.labels], ['annotation', metadata.annotations]] as const) {
    const fluxKey = Object.keys(keys ?? {}).find((key) => key.startsWith(`${FLUX_GROUP}/`));
    if (keys && fluxKey) {
      return { ...flux, namespace: keys[FLUX_NAMESPACE] || namespace, name: keys[FLUX_NAME] || null, key: `${where} ${keys[FLUX_NAME] ? FLUX_NAME : fluxKey}` };
    }
  }
  const reference = (metadata.ownerReferences ?? []).find((ref) => ref.kind === 'HelmRelease' && ref.apiVersion?.startsWith(`${FLUX_GROUP}/`));
  if (reference) return { ...flux, apiVersion: reference.apiVersion!, namespace, name: reference.name || null, key: `ownerReference ${reference.apiVersion}/HelmRelease` };
  const argo = { tool: 'Argo CD', kind: 'Application', apiVersion: 'argoproj.io/v1alpha1', seenOn } as const;
  const tracking = trackedApplication(metadata.annotations?.[ARGO_TRACKING_ID]);
  if (tracking) return { ...argo, ...argoApplication(tracking), key: `annotation ${ARGO_TRACKING_ID}` };
  const instance = metadata.labels?.[ARGO_INSTANCE_LABEL];
  if (instance && instance !== name) return { ...argo, ...argoApplication(instance), key: `label ${ARGO_INSTANCE_LABEL}` };
  return null;
}

/** The Application's instance name in a tracking id; null for a value Argo CD itself would not parse (ParseAppInstanceValue), which it does not track by. */
function trackedApplication(value: string | undefined): string | null {
  const parts = value?.split(':') ?? [];
  if (parts.length < 3) return null;
  const [app, groupKind, ...rest] = parts;
  const namespaceName = rest.join(':');
  return app && groupKind.split('/').length === 2 && namespaceName.split('/').length === 2 ? app : null;
}

/** Argo CD's instance name: `<namespace>_<name>` for an Application outside Argo CD's namespace, else its name alone. */
function argoApplication(instance: string): { namespace: string | null; name: string | null } {
  const at = instance.indexOf('_');
  if (at > 0) return { namespace: instance.slice(0, at), name: instance.slice(at + 1) || null };
  return { namespace: null, name: instance || null };
}

/** The owner as messages name it: `Flux HelmRelease flux-apps/incident-helper`, `Argo CD Application agents (in Argo CD's own namespace)`. */
export function ownerName(owner: GitopsOwner): string {
  const name = owner.name ?? '(unnamed)';
  return owner.namespace === null ? `${owner.tool} ${owner.kind} ${name} (in Argo CD's own namespace)` : `${owner.tool} ${owner.kind} ${owner.namespace}/${name}`;
}

/** The refusal's text: who owns the release, where that was seen, and to change it in git. */
export function ownedMessage(owner: GitopsOwner, target: { namespace: string; name: string }, operation: string): string {
  const subject = owner.kind === 'HelmRelease' ? 'the HelmRelease (its spec.values, or the chart version it pins)' : "the Application's source (its Helm values or manifests)";
  return (
    `agent ${target.namespace}/${target.name} is managed by ${ownerName(owner)} (the ${owner.seenOn}'s ${owner.key}): ` +
    `${operation} is refused, since ${owner.tool} would undo it on its next sync; change ${subject} in git instead. ` +
    `Reads, status and dry runs still work`
  );
}
