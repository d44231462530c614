import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { readClusterConfig, SERVICE_ACCOUNT_TOKEN } from './cluster-config.js';

const dir = mkdtempSync(join(tmpdir(), 'cluster-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

const GOOD = kubeconfig(
  'good',
  ['clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]', 'contexts: [{name: x, context: {cluster: c}}]', 'current-context: x', ''].join('\n'),
);
const EMPTY = kubeconfig('empty', '');
const NO_CONTEXT = kubeconfig('no-context', 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n');
const DANGLING = kubeconfig('dangling', 'contexts: [{name: x, context: {cluster: gone}}]\ncurrent-context: x\n');
const SELF = kubeconfig('self', 'clusters: [{name: c, cluster: {server: "http://localhost:8080"}}]\ncontexts: [{name: x, context: {cluster: c}}]\ncurrent-context: x\n');
const BROKEN = kubeconfig('broken', 'clusters: [unclosed\n');
const MISSING = join(dir, 'missing');
const HOME = mkdtempSync(join(dir, 'home-'));

describe(readClusterConfig.name, () => {
  it.each<[string, Parameters<typeof readClusterConfig>[0], RegExp]>([
    ['a KUBECONFIG naming a missing file', { KUBECONFIG: MISSING, HOME }, /^no cluster is configured: KUBECONFIG names .*missing, which does not exist; set KUBECONFIG/],
    ['a KUBECONFIG list naming only missing files', { KUBECONFIG: `${MISSING}:${MISSING}2`, HOME }, /none of which exists; set KUBECONFIG/],
    ['an empty kubeconfig', { KUBECONFIG: EMPTY, HOME }, /has no current-context \(an empty cluster configuration\); set KUBECONFIG/],
    ['a kubeconfig without contexts', { KUBECONFIG: NO_CONTEXT, HOME }, /has no current-context/],
    ['a context naming an undefined cluster', { KUBECONFIG: DANGLING, HOME }, /context x names no cluster with a server; set KUBECONFIG/],
    ['a kubeconfig that is not YAML', { KUBECONFIG: BROKEN, HOME }, /cannot be read as a kubeconfig .*; set KUBECONFIG/],
    ['nothing at all (helm would use localhost:8080)', { HOME }, /KUBECONFIG is not set, there is no in-cluster ServiceAccount and no .*\.kube\/config \(helm would fall back to localhost:8080/],
    ['a kubeconfig pointing at agent-manager itself', { KUBECONFIG: SELF, HOME }, /points at http:\/\/localhost:8080, which is agent-manager itself/],
  ])('refuses %s, naming KUBECONFIG', (_, env, problem) => {
    const config = readClusterConfig(env, 8080);
    expect(config.configured).toBe(false);
    expect(config.configured ? '' : config.problem).toMatch(problem);
  });

  it.each<[string, Parameters<typeof readClusterConfig>[0], string, string]>([
    ['KUBECONFIG', { KUBECONFIG: GOOD, HOME }, `KUBECONFIG=${GOOD}`, 'https://10.0.0.1:6443'],
    ['the first existing file of a KUBECONFIG list', { KUBECONFIG: `${MISSING}:${GOOD}`, HOME }, `KUBECONFIG=${MISSING}:${GOOD}`, 'https://10.0.0.1:6443'],
  ])('reads %s', (_, env, source, server) => {
    expect(readClusterConfig(env, 8080)).toEqual({ configured: true, source, server });
  });

  it('reads the in-cluster ServiceAccount when KUBECONFIG is unset', () => {
    const exists = (path: string) => path === SERVICE_ACCOUNT_TOKEN;
    expect(readClusterConfig({ HOME, KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, 8080, exists)).toEqual({
      configured: true,
      source: 'the in-cluster ServiceAccount',
      server: 'https://10.96.0.1:443',
    });
  });

  it('reads ~/.kube/config when KUBECONFIG is unset and there is no ServiceAccount', () => {
    const home = mkdtempSync(join(dir, 'home-kube-'));
    const file = join(home, '.kube', 'config');
    const exists = (path: string) => path === file;
    mkdirSync(join(home, '.kube'));
    writeFileSync(file, readFileSync(GOOD));
    expect(readClusterConfig({ HOME: home }, 8080, exists)).toEqual({ configured: true, source: file, server: 'https://10.0.0.1:6443' });
  });
});
