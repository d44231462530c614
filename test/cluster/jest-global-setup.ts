import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Brings up the project's real control plane (etcd + kube-apiserver, test/cluster/up.sh)
 * for the lifecycle suites, unless TEST_KUBECONFIG points at one already.
 */
export default function setup(): void {
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
