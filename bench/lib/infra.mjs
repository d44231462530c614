// The throw-away infrastructure a cluster benchmark run needs, through the project's own
// scripts: a local control plane (test/cluster/up.sh, down.sh) and, with BENCH_PG=1, a
// PostgreSQL (test/pg/up.sh, down.sh). Each lives in its own /tmp folder and is stopped at the end.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KUBECTL_BIN, ROOT } from './service.mjs';

const run = promisify(execFile);

async function script(path, args, env = {}) {
  const { stdout } = await run('bash', [join(ROOT, path), ...args], { env: { ...process.env, ...env }, maxBuffer: 16 << 20 });
  return stdout;
}

/** Starts a control plane (kube-apiserver + etcd + the kagent CRDs) in a new state folder. */
export async function startControlPlane() {
  const dir = mkdtempSync('/tmp/agent-manager-bench-cluster-');
  try {
    await script('test/cluster/up.sh', [dir]);
  } catch (error) {
    await script('test/cluster/down.sh', [dir]).catch(() => undefined);
    throw new Error(`test/cluster/up.sh failed: ${error.stderr ?? error.message}`, { cause: error });
  }
  const kubeconfig = join(dir, 'kubeconfig');
  return {
    dir,
    kubeconfig,
    createNamespace: (name) => run(KUBECTL_BIN, ['--kubeconfig', kubeconfig, 'create', 'namespace', name]),
    stop: () => script('test/cluster/down.sh', [dir]),
  };
}

/** Starts a PostgreSQL server in a new /tmp folder; `database()` makes a fresh database on it. */
export async function startPostgres() {
  const dir = mkdtempSync('/tmp/agent-manager-bench-pg-');
  let line;
  try {
    line = await script('test/pg/up.sh', [dir]);
  } catch (error) {
    await script('test/pg/down.sh', [dir]).catch(() => undefined);
    throw new Error(`test/pg/up.sh failed: ${error.stderr ?? error.message}`, { cause: error });
  }
  const serverUrl = /TEST_DATABASE_URL=(\S+)/.exec(line)[1];
  const { default: pg } = await import('pg');
  const admin = async (sql) => {
    const client = new pg.Client({ connectionString: serverUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  const urlOf = (name) => {
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  let n = 0;
  return {
    dir,
    /** A new empty database, or a copy of `template` (which nothing may be connected to). */
    async database(template) {
      const name = `bench_${process.pid}_${n++}`;
      await admin(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${new URL(template).pathname.slice(1)}"` : ''}`);
      return urlOf(name);
    },
    stop: () => script('test/pg/down.sh', [dir]),
  };
}
