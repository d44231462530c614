// `npm test`: every pass in turn, even when one fails (SQLite with helm 4: all suites; the cluster
// suites with helm 3; the store-facing suites on PostgreSQL), then one line per pass. Exits
// non-zero if any pass failed. Each pass leaves reports/jest-<pass>.json for scripts/test-summary.mjs.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readReport } from './test-summary.mjs';

const PASSES = [
  { name: 'SQLite + helm 4 (every suite)', script: 'test:jest', report: 'jest-sqlite.json' },
  { name: 'cluster suites + helm 3', script: 'test:helm3', report: 'jest-helm3.json' },
  { name: 'PostgreSQL (integration, e2e, cluster)', script: 'test:pg', report: 'jest-postgresql.json' },
];

async function runPass(pass) {
  const report = join('reports', pass.report);
  rmSync(report, { force: true });
  const started = Date.now();
  console.log(`\n### npm test: ${pass.name} (npm run ${pass.script})`);
  const child = spawn('npm', ['run', '--silent', pass.script], { stdio: 'inherit' });
  const [code, signal] = await once(child, 'exit');
  const counts = readReport(report);
  const ok = code === 0 && counts !== null && counts.failed === 0 && counts.passed > 0;
  const seconds = Math.round((Date.now() - started) / 1000);
  const tally = counts
    ? `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${counts.suitesFailed ? `, ${counts.suitesFailed} suites failed` : ''}`
    : `no report (${report})`;
  return { ok, line: `${ok ? 'PASS' : 'FAIL'} ${pass.name}: ${tally}; exit ${signal ?? code} after ${seconds}s` };
}

mkdirSync('reports', { recursive: true });
const results = [];
for (const pass of PASSES) results.push(await runPass(pass));
console.log('\nnpm test, every pass:');
for (const { line } of results) console.log(`  ${line}`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
