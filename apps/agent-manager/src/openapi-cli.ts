import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@app/common';
import { createApp, OPENAPI_PATH, openApiDocument } from './app.factory.js';

/**
 * Writes openapi/agent-manager.json from the code (`npm run openapi`), or with --check
 * fails when the committed file differs from what the code generates (CI).
 */
async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-openapi-'));
  const app = await createApp(loadConfig({ ...process.env, DATABASE_URL: `file:${join(scratch, 'openapi.db')}` }), { logger: false });
  try {
    const text = JSON.stringify(await openApiDocument(app), null, 2) + '\n';
    const file = join(process.cwd(), 'openapi', 'agent-manager.json');
    if (check) {
      let committed = '';
      try {
        committed = readFileSync(file, 'utf8');
      } catch {
        // missing counts as a difference
      }
      if (committed !== text) {
        console.error(`openapi: ${file} differs from the code (served at /${OPENAPI_PATH}); run npm run openapi and commit it`);
        process.exitCode = 1;
      } else {
        console.log('openapi: openapi/agent-manager.json matches the code');
      }
    } else {
      writeFileSync(file, text);
      console.log('openapi: wrote openapi/agent-manager.json');
    }
  } finally {
    await app.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

void main();
