// Stops what jest-global-setup.mjs started (only that), once: the first project's teardown does it.
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export default function teardown() {
  if (process.env.TEST_CLUSTER_STARTED === '1' && process.env.TEST_CLUSTER_DIR) {
    delete process.env.TEST_CLUSTER_STARTED;
    execFileSync('bash', [join(process.cwd(), 'test', 'cluster', 'down.sh'), process.env.TEST_CLUSTER_DIR], { stdio: 'inherit' });
  }
  if (process.env.TEST_PG_STARTED === '1' && process.env.TEST_PG_DIR) {
    delete process.env.TEST_PG_STARTED;
    execFileSync('bash', [join(process.cwd(), 'test', 'pg', 'down.sh'), process.env.TEST_PG_DIR], { stdio: 'inherit' });
  }
}
