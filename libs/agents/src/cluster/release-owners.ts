import { Injectable } from '@nestjs/common';
import { AppError } from '@app/common';
import { decodeReleaseData } from '@app/helm';
import { ClusterState, KubeClient, type LiveAgent, type SecretObject } from '@app/kube';
import type { ObjectMetadata, OwnerEvidence } from '../domain/gitops-owner.js';
import { ManifestReader } from './manifest-reader.js';
import { readLive } from './live-agent.js';

/** What the write runner asks of the cluster about a release's owner (a port: unit tests give their own). */
export interface OwnerEvidenceReader {
  /** What the release and its live object say about who manages them; null when the cluster cannot be asked (the write's helm run then refuses it). */
  evidence(namespace: string, name: string): Promise<OwnerEvidence | null>;
}

/**
 * Reads, on every write, what says who else manages a release (domain/gitops-owner.ts decides):
 * the newest revision Secret of the helm release (its labels and annotations, and the agent object
 * its manifest applied) and the live Agent (or AgentTemplate), as the caller, as helm reads them.
 * Never cached: Flux or Argo CD may take a release over at any time.
 */
@Injectable()
export class ReleaseOwners implements OwnerEvidenceReader {
  constructor(
    private readonly cluster: ClusterState,
    private readonly kube: KubeClient,
    private readonly manifests: ManifestReader,
  ) {}

  /**
   * What the cluster shows of the release's owners; null when the cluster cannot be asked (not
   * configured, or not answering): then helm, which needs the same cluster, refuses the write
   * itself and the failure is journaled as the write's, not answered before the journal is written.
   */
  async evidence(namespace: string, name: string): Promise<OwnerEvidence | null> {
    if (await this.cluster.problem()) return null;
    try {
      return await this.read(namespace, name);
    } catch (error) {
      if (error instanceof AppError && error.code === 'backend_error') return null;
      throw error;
    }
  }

  private async read(namespace: string, name: string): Promise<OwnerEvidence> {
    const secrets = await this.kube.listSecrets(namespace, `owner=helm,name=${name}`);
    const newest = newestRevision(secrets);
    const applied = newest ? await this.manifests.agentIn(manifestOf(newest)) : null;
    const live = await readLive(this.kube, applied, namespace, name);
    return { namespace, name, release: newest && metadataOf(newest), manifest: applied && metadataOf(applied), live: live && metadataOf(live) };
  }
}

/** The Secret of the highest revision (helm's `version` label). */
function newestRevision(secrets: SecretObject[]): SecretObject | null {
  let newest: SecretObject | null = null;
  for (const secret of secrets) {
    if (!newest || Number(secret.metadata.labels?.version) > Number(newest.metadata.labels?.version)) newest = secret;
  }
  return newest;
}

/** The manifest helm stored for the revision; '' when the Secret is not a release helm could read either. */
function manifestOf(secret: SecretObject): string {
  try {
    return secret.data?.release ? (decodeReleaseData(secret.data.release).manifest ?? '') : '';
  } catch {
    return '';
  }
}

function metadataOf(object: SecretObject | LiveAgent): ObjectMetadata {
  const metadata = object.metadata as ObjectMetadata;
  return { labels: metadata.labels ?? null, annotations: metadata.annotations ?? null, ownerReferences: metadata.ownerReferences ?? null };
}
