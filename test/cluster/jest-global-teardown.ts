import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export default function teardown(): void {
  if (process.env.TEST_CLUSTER_STARTED !== '1' || !process.env.TEST_CLUSTER_DIR) return;
  execFileSync('bash', [join(process.cwd(), 'test', 'cluster', 'down.sh'), process.env.TEST_CLUSTER_DIR], { stdio: 'inherit' });
}
