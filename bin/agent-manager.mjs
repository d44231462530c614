#!/usr/bin/env -S node --max-semi-space-size=4 --heap-growing-percent=30
// The agent-manager command (`agent-manager mcp`, `agent-manager serve`): runs the built CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../dist/service/cli.mjs', import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  console.error('agent-manager: dist/ is missing; run npm run build in the agent-manager directory first');
  process.exit(1);
}
await import(cli.href);
