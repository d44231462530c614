// `npm run test:contract`: the OpenAPI document as tools and browsers meet it. Runs every check,
// prints one line each, and exits non-zero if any failed:
//   redocly   Redocly's recommended rules: zero errors, zero warnings (redocly.yaml)
//   spectral  Spectral's oas ruleset: zero errors, zero warnings (.spectral.yaml)
//   client    an openapi-typescript client of the document compiles under tsc --strict (client-check.mts)
//   swagger   Swagger UI's Try it out on create, unchanged, is a dry run; with auth on, it answers 401
//             until Authorize is given an API token, then the dry run (swagger-ui.mjs)
//   execute   Swagger UI at this machine's non-loopback address over plain HTTP renders every operation,
//             and Execute on every one with its examples unchanged leaves store and journal as they
//             were (swagger-execute.mjs)
// Needs `npm ci --prefix test/contract` (CI does it) and, for the browser, Debian's chromium.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const documentPath = join(here, '..', '..', 'openapi', 'agent-manager.json');
const bin = (name) => join(here, 'node_modules', '.bin', name);
const run = promisify(execFile);
// no update check and no usage report from the tools: CI reaches the npm registry only
const quiet = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_UPDATE_NOTIFIER: '1' };

async function tool(name, args) {
  try {
    const { stdout, stderr } = await run(bin(name), args, { cwd: here, env: quiet, maxBuffer: 64 * 1024 * 1024 });
    return { ok: true, stdout, output: stdout + stderr };
  } catch (error) {
    return { ok: false, stdout: error.stdout ?? '', output: `${error.stdout ?? ''}${error.stderr ?? ''}` || error.message };
  }
}

async function redocly() {
  const { stdout, output } = await tool('redocly', ['lint', '--config', 'redocly.yaml', '--format', 'json', documentPath]);
  if (!stdout.trim().startsWith('{')) return { ok: false, summary: 'redocly gave no report', detail: output };
  const report = JSON.parse(stdout);
  const { errors, warnings } = report.totals;
  const problems = report.problems.map((p) => `  ${p.severity} ${p.ruleId}: ${p.message} (${p.location?.[0]?.pointer ?? ''})`);
  return { ok: errors === 0 && warnings === 0, summary: `${errors} errors, ${warnings} warnings`, detail: problems.join('\n') };
}

async function spectral() {
  const { ok, output } = await tool('spectral', ['lint', '--ruleset', '.spectral.yaml', '--fail-severity', 'warn', '--format', 'text', documentPath]);
  const problems = output.split('\n').filter((line) => line.includes(':'));
  return { ok, summary: ok ? '0 errors, 0 warnings' : `${problems.length} problems`, detail: ok ? '' : output };
}

async function client() {
  const dir = mkdtempSync(join(tmpdir(), 'agent-manager-client-'));
  try {
    const generated = await tool('openapi-typescript', [documentPath, '--output', join(dir, 'agent-manager.d.ts')]);
    if (!generated.ok) return { ok: false, summary: 'openapi-typescript refused the document', detail: generated.output };
    copyFileSync(join(here, 'client-check.mts'), join(dir, 'client-check.mts'));
    const options = { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', types: [] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: options, files: ['client-check.mts'] }));
    const compiled = await tool('tsc', ['-p', join(dir, 'tsconfig.json')]);
    return { ok: compiled.ok, summary: compiled.ok ? 'generated client compiles under strict' : 'strict compile failed', detail: compiled.output };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function swagger() {
  try {
    const { stdout } = await run(process.execPath, [join(here, 'swagger-ui.mjs')], { cwd: here, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, summary: stdout.trim().split('\n').pop().replace(/^swagger-ui: /, ''), detail: '' };
  } catch (error) {
    return { ok: false, summary: 'Try it out on create (without and with auth) failed', detail: `${error.stdout ?? ''}${error.stderr ?? ''}` };
  }
}

async function execute() {
  try {
    const { stdout } = await run(process.execPath, [join(here, 'swagger-execute.mjs')], { cwd: here, maxBuffer: 16 * 1024 * 1024 });
    return { ok: true, summary: stdout.trim().split('\n').pop().replace(/^swagger-execute: /, ''), detail: '' };
  } catch (error) {
    return { ok: false, summary: 'Swagger UI off loopback, Execute on every operation unchanged', detail: `${error.stdout ?? ''}${error.stderr ?? ''}` };
  }
}

if (!existsSync(bin('redocly'))) {
  console.error('test:contract: its tools are not installed: npm ci --prefix test/contract --no-audit --no-fund');
  process.exit(2);
}
let failed = 0;
for (const [name, check] of Object.entries({ redocly, spectral, client, swagger, execute })) {
  const result = await check();
  if (!result.ok) failed += 1;
  console.log(`contract ${name}: ${result.ok ? 'ok' : 'FAILED'} (${result.summary})`);
  if (!result.ok && result.detail) console.log(result.detail);
}
process.exit(failed > 0 ? 1 : 0);
