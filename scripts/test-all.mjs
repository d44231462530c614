// `npm test`: builds dist/ when it is stale (suites start the built service), then ONE jest run of
// every pass of test/passes.mjs — every suite on SQLite with helm 4, the cluster suites that depend
// on helm's major with helm 3, the suites that exercise the store on PostgreSQL — scheduled over
// parallel workers, longest suites first. Then one line per pass from reports/jest-<pass>.json
// (test/support/pass-reporter.mjs). Exits non-zero if any pass failed or ran nothing.
// AGENT_MANAGER_TEST_WORKERS sets the workers (default 3 on 2 cores: the suites wait on helm,
// the API server and PostgreSQL more than they compute); AGENT_MANAGER_TEST_PASSES the passes.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { PASSES, selectedPasses } from '../test/passes.mjs';
import { readReport } from './test-summary.mjs';

const passes = selectedPasses(process.env.AGENT_MANAGER_TEST_PASSES ?? Object.keys(PASSES).join(','));
const workers = process.env.AGENT_MANAGER_TEST_WORKERS ?? String(availableParallelism() + 1);

async function run(command, args, env = process.env) {
  const child = spawn(command, args, { stdio: 'inherit', env });
  const [code, signal] = await once(child, 'exit');
  return signal ?? code;
}

const buildExit = await run(process.execPath, ['scripts/build-if-needed.mjs']);
if (buildExit !== 0) {
  console.error(`npm test: the build failed (exit ${buildExit}); no suite ran`);
  process.exit(1);
}

mkdirSync('reports', { recursive: true });
for (const pass of passes) rmSync(join('reports', PASSES[pass].report), { force: true });
const started = Date.now();
console.log(`\n### npm test: ${passes.map((pass) => PASSES[pass].title).join('; ')} — one jest run, ${workers} workers`);
const exit = await run(
  process.execPath,
  ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js', `--maxWorkers=${workers}`, ...process.argv.slice(2)],
  { ...process.env, AGENT_MANAGER_TEST_PASSES: passes.join(',') },
);
const seconds = Math.round((Date.now() - started) / 1000);

console.log(`\nnpm test, every pass (jest exited ${exit} after ${seconds}s):`);
let ok = exit === 0;
for (const pass of passes) {
  const counts = readReport(join('reports', PASSES[pass].report));
  const passOk = counts !== null && counts.failed === 0 && counts.passed > 0;
  ok &&= passOk;
  const tally = counts
    ? `${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped${counts.suitesFailed ? `, ${counts.suitesFailed} suites failed` : ''}`
    : `no report (reports/${PASSES[pass].report})`;
  console.log(`  ${passOk ? 'PASS' : 'FAIL'} ${PASSES[pass].title}: ${tally}`);
}
process.exit(ok ? 0 : 1);
