import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClusterState } from './cluster-state.js';
import { KubeClient } from './kube.client.js';

/**
 * An API server that accepts connections and never answers (a hung apiserver, a black-holing
 * proxy): a real TCP listener. The cluster-reachability check is a FAKE here (named as such:
 * it reports the cluster reachable, as its TCP probe would for this listener).
 */
describe(`${KubeClient.name} against an API server that never answers`, () => {
  let silent: Server;
  const sockets: Socket[] = [];
  let dir: string;
  let kubeconfig: string;
  const reachable = { problem: async () => undefined } as unknown as ClusterState;

  beforeAll(async () => {
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'kube-silent-'));
    kubeconfig = join(dir, 'kubeconfig');
    const server = `http://127.0.0.1:${(silent.address() as { port: number }).port}`;
    writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives up after its read timeout with a 502-class error saying so, instead of waiting for good', async () => {
    const kube = new KubeClient(reachable, kubeconfig, undefined, undefined, 300);
    await expect(kube.getAgent('ns', 'a')).rejects.toMatchObject({ code: 'backend_error', message: expect.stringContaining('did not answer reading Agent ns/a within 0.3s') });
  });

  it('does so for a read that impersonates the caller too', async () => {
    const kube = new KubeClient(reachable, kubeconfig, () => ({ user: 'token:alice', groups: ['team-a'] }), undefined, 300);
    await expect(kube.getAgent('ns', 'a')).rejects.toMatchObject({ code: 'backend_error', message: expect.stringContaining('within 0.3s') });
  });
});
