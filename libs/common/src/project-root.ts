import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The agent-manager project directory (where package.json, charts/ and node_modules/ are), found
 * from this file whether it runs from src/ or dist/. Defaults that live in the project resolve
 * against it, so `agent-manager mcp` spawned by an MCP client from any directory finds them.
 */
export const PROJECT_ROOT = findProjectRoot(dirname(fileURLToPath(import.meta.url)));

/** agent-manager's own package.json, read once. */
export const PROJECT_PACKAGE = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { name: string; version?: string };

function findProjectRoot(start: string): string {
  for (let dir = start; dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { name?: string }).name === 'agent-manager') return dir;
  }
  throw new Error(`agent-manager's package.json was not found above ${start}`);
}
