// `npm start` builds first when dist/ is missing or older than the sources.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Written by `npm run build` after the alias rewrite, so a half-finished build counts as stale.
const entry = join(root, 'dist', '.built');

function newest(dir) {
  let latest = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    latest = Math.max(latest, stat.isDirectory() ? newest(path) : stat.mtimeMs);
  }
  return latest;
}

const sources = Math.max(newest(join(root, 'apps')), newest(join(root, 'libs')), statSync(join(root, 'package.json')).mtimeMs);
if (!existsSync(entry) || statSync(entry).mtimeMs < sources) {
  console.log('agent-manager: building (dist/ is missing or older than the sources)');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
}
