import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeConfig, Watch } from '@kubernetes/client-node';

/**
 * Resolves once helm's release Secret (labels owner=helm, name=<release>) carries `status`, e.g.
 * pending-install: the moment a fault is injected. `act` runs synchronously in the watch event,
 * before anything else can happen in this process (helm holds a release pending only for the
 * few requests of one run, so the fault must not wait for a promise).
 */
export async function whenReleaseReaches(
  kubeconfig: string,
  ref: { namespace: string; name: string },
  status: string,
  act: () => void,
): Promise<{ reached: Promise<void>; stop(): void }> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  let acted = false;
  const reached = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  const watch = await new Watch(config).watch(
    `/api/v1/namespaces/${ref.namespace}/secrets`,
    { labelSelector: `owner=helm,name=${ref.name}` },
    (_phase, secret: { metadata?: { labels?: Record<string, string> } }) => {
      if (acted || secret.metadata?.labels?.status !== status) return;
      acted = true;
      act();
      resolve();
    },
    (error: unknown) => {
      if (error && !acted) reject(error as Error);
    },
  );
  return { reached, stop: () => watch.abort() };
}

/** The pids of `pid` and every process below it (the service, helm, the shim between them). */
export async function processTree(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(join('/proc', entry, 'stat'), 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!parents.has(ppid)) parents.set(ppid, []);
    parents.get(ppid)!.push(Number(entry));
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const child of parents.get(tree[i]) ?? []) tree.push(child);
  return tree;
}

/** SIGKILLs a process and everything below it at once: a pod dying with its helm child. */
export async function killTree(pid: number): Promise<number[]> {
  const tree = await processTree(pid);
  for (const p of tree) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return tree;
}

