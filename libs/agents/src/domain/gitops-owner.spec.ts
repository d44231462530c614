import { describe, expect, it } from '@jest/globals';
import { gitopsOwner, ownedMessage, type GitopsOwner, type OwnerEvidence } from './gitops-owner.js';

const ref = { namespace: 'agents', name: 'incident-helper' };
/** The agent chart's own labels: the instance label is the release's name, as every Helm chart sets it. */
const CHART_LABELS = { 'app.kubernetes.io/name': 'agent', 'app.kubernetes.io/instance': 'incident-helper', 'app.kubernetes.io/managed-by': 'Helm' };
/** helm's own labels on a release Secret. */
const HELM_SECRET = { labels: { owner: 'helm', name: 'incident-helper', status: 'deployed', version: '3' } };
const FLUX = { tool: 'Flux', kind: 'HelmRelease', apiVersion: 'helm.toolkit.fluxcd.io/v2' } as const;
const ARGO = { tool: 'Argo CD', kind: 'Application', apiVersion: 'argoproj.io/v1alpha1' } as const;

describe(gitopsOwner.name, () => {
  it.each<[string, Omit<OwnerEvidence, 'namespace' | 'name'>, GitopsOwner | null]>([
    ['none: the chart\'s own labels and helm\'s Secret labels', { live: { labels: CHART_LABELS }, release: HELM_SECRET, manifest: { labels: CHART_LABELS } }, null],
    ['none: nothing found (no release, no live object)', { live: null, release: null, manifest: null }, null],
    [
      "Flux labels on the live Agent (helm-controller's origin labels)",
      { live: { labels: { ...CHART_LABELS, 'helm.toolkit.fluxcd.io/name': 'agents-hr', 'helm.toolkit.fluxcd.io/namespace': 'flux-apps' } }, release: HELM_SECRET },
      { ...FLUX, namespace: 'flux-apps', name: 'agents-hr', seenOn: 'live object', key: 'label helm.toolkit.fluxcd.io/name' },
    ],
    [
      "Flux labels in the release's manifest (post-rendered), the live object not carrying them",
      { live: { labels: CHART_LABELS }, release: HELM_SECRET, manifest: { labels: { ...CHART_LABELS, 'helm.toolkit.fluxcd.io/name': 'agents-hr', 'helm.toolkit.fluxcd.io/namespace': 'flux-apps' } } },
      { ...FLUX, namespace: 'flux-apps', name: 'agents-hr', seenOn: 'release manifest', key: 'label helm.toolkit.fluxcd.io/name' },
    ],
    [
      "Flux labels on the release Secret (a release's custom labels); no namespace label: the release's",
      { release: { labels: { ...HELM_SECRET.labels, 'helm.toolkit.fluxcd.io/name': 'agents-hr' } } },
      { ...FLUX, namespace: 'agents', name: 'agents-hr', seenOn: 'release', key: 'label helm.toolkit.fluxcd.io/name' },
    ],
    [
      'Flux annotations on the live Agent',
      { live: { labels: CHART_LABELS, annotations: { 'helm.toolkit.fluxcd.io/name': 'agents-hr', 'helm.toolkit.fluxcd.io/namespace': 'flux-apps' } } },
      { ...FLUX, namespace: 'flux-apps', name: 'agents-hr', seenOn: 'live object', key: 'annotation helm.toolkit.fluxcd.io/name' },
    ],
    [
      'another helm.toolkit.fluxcd.io/ key alone: Flux, the HelmRelease unnamed',
      { live: { annotations: { 'helm.toolkit.fluxcd.io/driftDetection': 'disabled' } } },
      { ...FLUX, namespace: 'agents', name: null, seenOn: 'live object', key: 'annotation helm.toolkit.fluxcd.io/driftDetection' },
    ],
    [
      'an ownerReference to a HelmRelease',
      { live: { labels: CHART_LABELS, ownerReferences: [{ apiVersion: 'helm.toolkit.fluxcd.io/v2', kind: 'HelmRelease', name: 'agents-hr' }] } },
      { ...FLUX, namespace: 'agents', name: 'agents-hr', seenOn: 'live object', key: 'ownerReference helm.toolkit.fluxcd.io/v2/HelmRelease' },
    ],
    ['an ownerReference to something else (a HelmRelease of another group)', { live: { ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'HelmRelease', name: 'x' }] } }, null],
    [
      "Argo CD's tracking-id annotation, the Application in Argo CD's namespace",
      { live: { labels: CHART_LABELS, annotations: { 'argocd.argoproj.io/tracking-id': 'agents-app:kagent.dev/Agent:agents/incident-helper' } } },
      { ...ARGO, namespace: null, name: 'agents-app', seenOn: 'live object', key: 'annotation argocd.argoproj.io/tracking-id' },
    ],
    [
      "Argo CD's tracking-id annotation of an Application in another namespace (<namespace>_<name>)",
      { live: { annotations: { 'argocd.argoproj.io/tracking-id': 'team-a_agents-app:kagent.dev/Agent:agents/incident-helper' } } },
      { ...ARGO, namespace: 'team-a', name: 'agents-app', seenOn: 'live object', key: 'annotation argocd.argoproj.io/tracking-id' },
    ],
    ['a tracking-id Argo CD would not parse (no <group>/<kind>:<namespace>/<name>): not tracked', { live: { annotations: { 'argocd.argoproj.io/tracking-id': 'agents-app' } } }, null],
    [
      "Argo CD's label tracking: the instance label names an Application, not the release",
      { live: { labels: { ...CHART_LABELS, 'app.kubernetes.io/instance': 'agents-app' } } },
      { ...ARGO, namespace: null, name: 'agents-app', seenOn: 'live object', key: 'label app.kubernetes.io/instance' },
    ],
    ['the instance label equal to the release name: the chart\'s own, not Argo CD', { live: { labels: CHART_LABELS }, manifest: { labels: CHART_LABELS } }, null],
    [
      'the live object is asked before the release: both owned, the live one named',
      {
        live: { annotations: { 'argocd.argoproj.io/tracking-id': 'agents-app:kagent.dev/Agent:agents/incident-helper' } },
        manifest: { labels: { 'helm.toolkit.fluxcd.io/name': 'agents-hr', 'helm.toolkit.fluxcd.io/namespace': 'flux-apps' } },
      },
      { ...ARGO, namespace: null, name: 'agents-app', seenOn: 'live object', key: 'annotation argocd.argoproj.io/tracking-id' },
    ],
  ])('%s', (_case, evidence, owner) => {
    expect(gitopsOwner({ ...ref, ...evidence })).toEqual(owner);
  });
});

describe(ownedMessage.name, () => {
  it('names the owner, where it was seen, and says to change it in git', () => {
    const owner: GitopsOwner = { ...FLUX, namespace: 'flux-apps', name: 'agents-hr', seenOn: 'live object', key: 'label helm.toolkit.fluxcd.io/name' };
    const message = ownedMessage(owner, ref, 'update_agent');
    expect(message).toContain('agent agents/incident-helper is managed by Flux HelmRelease flux-apps/agents-hr');
    expect(message).toContain("the live object's label helm.toolkit.fluxcd.io/name");
    expect(message).toMatch(/change the HelmRelease .* in git instead/);
  });

  it("names Argo CD's namespace when the tracking id does not", () => {
    const owner: GitopsOwner = { ...ARGO, namespace: null, name: 'agents-app', seenOn: 'live object', key: 'annotation argocd.argoproj.io/tracking-id' };
    expect(ownedMessage(owner, ref, 'delete_agent')).toContain("is managed by Argo CD Application agents-app (in Argo CD's own namespace)");
  });
});
