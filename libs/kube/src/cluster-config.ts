import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { parse } from 'yaml';
import { append } from '@app/common';

/** Where helm (and the status reads) will find the cluster, or why there is none. */
export type ClusterConfig =
  | { configured: true; source: string; server: string }
  | { configured: false; source: string; problem: string };

export interface ClusterEnv {
  KUBECONFIG?: string;
  HOME?: string;
  KUBERNETES_SERVICE_HOST?: string;
  KUBERNETES_SERVICE_PORT?: string;
}

/** The source of a configuration read from the pod's ServiceAccount. */
export const IN_CLUSTER = 'the in-cluster ServiceAccount';

export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

const REMEDY = 'set KUBECONFIG to the kubeconfig of the cluster agents are written to (in a pod, leave it unset to use the ServiceAccount)';

interface NamedCluster {
  name?: string;
  cluster?: { server?: string } | null;
}
interface NamedContext {
  name?: string;
  context?: { cluster?: string } | null;
}
interface Kubeconfig {
  'current-context'?: string;
  clusters?: NamedCluster[] | null;
  contexts?: NamedContext[] | null;
}

/**
 * Reads the cluster configuration helm would use, as client-go does: the KUBECONFIG files
 * (a list, merged first-wins), else the in-cluster ServiceAccount, else ~/.kube/config. With
 * none of them helm falls back to localhost:8080 — never a cluster here, possibly
 * agent-manager itself — so that counts as not configured. `ownPort` is agent-manager's port:
 * a kubeconfig pointing at it is refused too.
 */
export function readClusterConfig(env: ClusterEnv, ownPort?: number, exists: (path: string) => boolean = existsSync): ClusterConfig {
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p.length > 0);
  if (listed.length > 0) {
    const files = listed.filter((p) => exists(p));
    const source = `KUBECONFIG=${env.KUBECONFIG}`;
    if (files.length === 0) {
      const what = listed.length === 1 ? `names ${listed[0]}, which does not exist` : `names ${listed.join(', ')}, none of which exists`;
      return { configured: false, source, problem: `no cluster is configured: KUBECONFIG ${what}; ${REMEDY}` };
    }
    return fromFiles(files, source, ownPort);
  }
  if (env.KUBERNETES_SERVICE_HOST && exists(SERVICE_ACCOUNT_TOKEN)) {
    const host = env.KUBERNETES_SERVICE_HOST.includes(':') ? `[${env.KUBERNETES_SERVICE_HOST}]` : env.KUBERNETES_SERVICE_HOST;
    return { configured: true, source: IN_CLUSTER, server: `https://${host}:${env.KUBERNETES_SERVICE_PORT ?? '443'}` };
  }
  const home = join(env.HOME ?? homedir(), '.kube', 'config');
  if (exists(home)) return fromFiles([home], home, ownPort);
  return {
    configured: false,
    source: 'none',
    problem: `no cluster is configured: KUBECONFIG is not set, there is no in-cluster ServiceAccount and no ${home} (helm would fall back to localhost:8080, which is not a cluster); ${REMEDY}`,
  };
}

function fromFiles(files: string[], source: string, ownPort: number | undefined): ClusterConfig {
  const merged = { 'current-context': '', clusters: [] as NamedCluster[], contexts: [] as NamedContext[] };
  for (const file of files) {
    let config: Kubeconfig | null;
    try {
      config = parse(readFileSync(file, 'utf8')) as Kubeconfig | null;
    } catch (error) {
      return { configured: false, source, problem: `no cluster is configured: KUBECONFIG file ${file} cannot be read as a kubeconfig (${(error as Error).message.split('\n')[0]}); ${REMEDY}` };
    }
    if (!config || typeof config !== 'object') continue;
    merged['current-context'] ||= config['current-context'] ?? '';
    append(merged.clusters, Array.isArray(config.clusters) ? config.clusters : []);
    append(merged.contexts, Array.isArray(config.contexts) ? config.contexts : []);
  }
  const named = files.join(', ');
  const current = merged['current-context'];
  if (!current) return { configured: false, source, problem: `no cluster is configured: the kubeconfig ${named} has no current-context (an empty cluster configuration); ${REMEDY}` };
  const context = merged.contexts.find((c) => c.name === current);
  const cluster = merged.clusters.find((c) => c.name === context?.context?.cluster);
  const server = cluster?.cluster?.server;
  if (!server) {
    const why = !context ? `names context ${current}, which it does not define` : `context ${current} names no cluster with a server`;
    return { configured: false, source, problem: `no cluster is configured: the kubeconfig ${named} ${why}; ${REMEDY}` };
  }
  if (ownPort !== undefined && pointsAtSelf(server, ownPort)) {
    return { configured: false, source, problem: `the kubeconfig ${named} points at ${server}, which is agent-manager itself, not a cluster; ${REMEDY}` };
  }
  return { configured: true, source, server };
}

function pointsAtSelf(server: string, ownPort: number): boolean {
  try {
    const url = new URL(server);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    return port === ownPort && ['localhost', '127.0.0.1', '[::1]', '0.0.0.0'].includes(url.hostname);
  } catch {
    return false;
  }
}
