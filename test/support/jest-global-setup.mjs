// What jest's global setups start (jest.config.mjs), once per jest run whichever project asks first,
// leaving its address in the environment the workers inherit; jest-global-teardown.mjs stops it.
// Jest runs a global setup module once per run however many projects name it, so each need has a
// module of its own (global-setup-*.mjs) and a project names the one that starts what it needs.
// - cluster suites: the project's real control plane (etcd + kube-apiserver, test/cluster/up.sh),
//   unless TEST_KUBECONFIG points at one already → TEST_KUBECONFIG;
// - the PostgreSQL pass: a throw-away server (test/pg/up.sh), unless TEST_DATABASE_URL names one
//   already → TEST_PG_SERVER_URL (test/support/pass-postgresql.ts hands it to the suites).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function startCluster() {
  if (process.env.TEST_KUBECONFIG) return;
  const dir = process.env.TEST_CLUSTER_DIR ?? join(tmpdir(), `agent-manager-test-cluster-${process.pid}`);
  const out = execFileSync('bash', [join(process.cwd(), 'test', 'cluster', 'up.sh'), dir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, AGENT_MANAGER_CLUSTER_KUBECTL: 'none' },
  });
  const kubeconfig = /export KUBECONFIG=(\S+)/.exec(out)?.[1];
  if (!kubeconfig) throw new Error(`test/cluster/up.sh printed no KUBECONFIG: ${out}`);
  process.env.TEST_KUBECONFIG = kubeconfig;
  process.env.TEST_CLUSTER_DIR = dir;
  process.env.TEST_CLUSTER_STARTED = '1';
}

export function startPostgres() {
  if (process.env.TEST_PG_SERVER_URL) return;
  if (process.env.TEST_DATABASE_URL) {
    process.env.TEST_PG_SERVER_URL = process.env.TEST_DATABASE_URL;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-pg-'));
  const out = execFileSync('bash', [join(process.cwd(), 'test', 'pg', 'up.sh'), dir], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const url = /export TEST_DATABASE_URL=(\S+)/.exec(out)?.[1];
  if (!url) throw new Error(`test/pg/up.sh printed no TEST_DATABASE_URL: ${out}`);
  process.env.TEST_PG_SERVER_URL = url;
  process.env.TEST_PG_DIR = dir;
  process.env.TEST_PG_STARTED = '1';
}
