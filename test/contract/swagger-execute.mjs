// Swagger UI as an admin meets it in a cluster: the service on this machine's own non-loopback
// address over plain HTTP (authentication on, ALLOWED_HOSTS naming the address), opened in
// Debian's chromium. The page must render every operation of the document, fetch nothing but
// its own origin, and pressing Try it out -> Execute on EVERY operation with the examples left
// unchanged must change nothing: the store (agents, their revisions, blueprints and their
// versions) and the journal read the same before and after. The store first holds what the
// README's examples create (agents/incident-helper, the incident_helper blueprint).
// Env: CHROMIUM (default /usr/bin/chromium), KUBECONFIG (default: none, helm reaches no cluster)
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import puppeteer from 'puppeteer-core';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const START_TIMEOUT_MS = 180_000; // npm start builds dist/ first when it is stale
const EXECUTE_TIMEOUT_MS = 60_000;
const TOKEN = 'am_swagger_execute_8d1f0b7a4c2e4d6f9a3b5c7e1f2a4b6c';
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

function fail(message) {
  throw new Error(`swagger-execute: ${message}`);
}

/** The first IPv4 address of this machine that is not loopback: where a cluster's Service would reach the pod. */
function ownAddress() {
  const address = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!address) fail('this machine has no non-loopback IPv4 address to serve on');
  return address.address;
}

async function freePort(host) {
  const server = createServer().listen(0, host);
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

async function waitHealthy(base, service) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (service.exitCode !== null) fail(`the service exited with ${service.exitCode} before it was healthy`);
    try {
      if ((await fetch(`${base}/healthz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  fail(`the service was not healthy within ${START_TIMEOUT_MS / 1000}s`);
}

function authEnv(scratch) {
  const tokens = join(scratch, 'tokens.yaml');
  writeFileSync(tokens, `- name: swagger\n  sha256: ${createHash('sha256').update(TOKEN).digest('hex')}\n`);
  const policy = join(scratch, 'policy.yaml');
  writeFileSync(policy, 'roles:\n  admin: ["*"]\nbindings:\n  - role: admin\n    subjects: ["token:swagger"]\n    namespaces: ["*"]\n');
  return { API_TOKENS_FILE: tokens, AUTHZ_POLICY_FILE: policy };
}

/** GET as the admin token; every answer must be 200. */
async function read(base, path) {
  const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = await res.json();
  if (res.status !== 200) fail(`GET ${path} answered ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

/** What Execute must not change: agents with their revisions, blueprints with their versions, and the journal. */
async function snapshot(base) {
  const agents = (await read(base, '/api/v1/agents?status=all&limit=100')).items;
  const revisions = {};
  for (const a of agents) revisions[`${a.namespace}/${a.name}`] = (await read(base, `/api/v1/agents/${a.namespace}/${a.name}/revisions?life=all`)).items;
  const blueprints = (await read(base, '/api/v1/blueprints')).items;
  const versions = {};
  for (const b of blueprints) versions[b.name] = (await read(base, `/api/v1/blueprints/${b.name}/versions`)).items;
  const journal = (await read(base, '/api/v1/operations?limit=100')).items;
  return { agents, revisions, blueprints, versions, journal };
}

/** Every operation of the document with the id Swagger UI gives its block. */
function operationsOf(document) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, id: `operations-${item[method].tags[0]}-${item[method].operationId}` })),
  );
}

async function authorize(page) {
  await page.click('.auth-wrapper .btn.authorize');
  await page.waitForSelector('.modal-ux .auth-container input');
  await page.type('.modal-ux .auth-container input', TOKEN);
  await page.click('.modal-ux .auth-btn-wrapper .btn.authorize');
  await page.waitForSelector('.modal-ux .auth-btn-wrapper .btn-done');
  await page.click('.modal-ux .auth-btn-wrapper .btn-done');
  await page.waitForSelector('.modal-ux', { hidden: true });
}

/** Expands the operation, presses Try it out and Execute with what is offered, and returns the status shown. */
async function executeUnchanged(page, op) {
  const block = `#${op.id}`;
  await page.$eval(`${block} .opblock-summary`, (el) => el.scrollIntoView());
  await page.click(`${block} .opblock-summary`);
  await page.waitForSelector(`${block} .try-out__btn`);
  await page.click(`${block} .try-out__btn`);
  await page.waitForSelector(`${block} .execute`);
  await page.click(`${block} .execute`);
  const status = `${block} .live-responses-table tbody .response-col_status`;
  await page.waitForSelector(status, { timeout: EXECUTE_TIMEOUT_MS }).catch(async () => {
    const invalid = await page.$$eval(`${block} .invalid`, (els) => els.map((el) => el.getAttribute('placeholder') ?? el.textContent));
    fail(`${op.method.toUpperCase()} ${op.path}: Execute showed no answer${invalid.length ? ` (Swagger UI refused to send: invalid ${invalid.join(', ')})` : ''}`);
  });
  const shown = (await page.$eval(status, (el) => el.textContent ?? '')).trim();
  // Closed again, as a person moves on: every open operation (its form and answer) is rendered
  // anew on each later click, which made the walk through 44 operations take minutes of CPU.
  await page.click(`${block} .opblock-summary`);
  await page.waitForSelector(`${block} .execute`, { hidden: true });
  return shown;
}

function difference(before, after) {
  for (const key of Object.keys(before)) {
    const [a, b] = [JSON.stringify(before[key], null, 1), JSON.stringify(after[key], null, 1)];
    if (a !== b) return `${key} changed:\n--- before\n${a.slice(0, 1500)}\n--- after\n${b.slice(0, 1500)}`;
  }
  return null;
}

async function main() {
  if (!existsSync(chromium)) fail(`${chromium} not found: apt-get install chromium (or set CHROMIUM)`);
  const host = ownAddress();
  const port = await freePort(host);
  const base = `http://${host}:${port}`;
  const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-swagger-execute-'));
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: host,
    ALLOWED_HOSTS: host,
    DATABASE_URL: `file:${join(scratch, 'agent-manager.db')}`,
    KUBECONFIG: process.env.KUBECONFIG ?? join(scratch, 'no-cluster-kubeconfig'),
    LOG_LEVEL: 'warn',
    ...authEnv(scratch),
  };
  // npm start builds dist/ when it is stale; the seed reads dist/ too, so build first, then seed.
  await promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-if-needed.mjs')], { cwd: root, maxBuffer: 16 * 1024 * 1024 });
  await promisify(execFile)(process.execPath, [join(here, 'seed-store.mjs')], { cwd: root, env });
  const service = spawn('npm', ['start', '--silent'], { cwd: root, env, detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
  let browser;
  try {
    await waitHealthy(base, service);
    const document = await read(base, '/api/v1/openapi.json');
    const operations = operationsOf(document);
    // The README's blueprint, created for real as the README shows.
    const readme = { name: 'incident_helper', description: 'Creates an incident helper for a team.', fixed: { modelConfig: 'default-model-config', toolset: ['preset:read-only'] }, open: ['displayName'] };
    const created = await fetch(`${base}/api/v1/blueprints`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify(readme) });
    if (created.status !== 201) fail(`creating the README's blueprint answered ${created.status}: ${await created.text()}`);
    const before = await snapshot(base);
    if (before.agents.length !== 1 || before.blueprints.length !== 1) fail(`the store does not hold the README's agent and blueprint: ${JSON.stringify(before).slice(0, 500)}`);

    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', `--user-data-dir=${join(scratch, 'chromium')}`],
    });
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 2000 });
    const elsewhere = [];
    const failed = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(`${base}/`) && !r.url().startsWith('data:')) elsewhere.push(r.url());
    });
    page.on('requestfailed', (r) => failed.push(`${r.url()} (${r.failure()?.errorText})`));
    await page.goto(`${base}/docs`, { waitUntil: 'networkidle0' });
    const rendered = await page.waitForSelector('.opblock', { timeout: 30_000 }).then(
      () => page.$$eval('.opblock', (els) => els.map((el) => el.id)),
      () => [],
    );
    const missing = operations.filter((op) => !rendered.includes(op.id));
    if (missing.length > 0 || rendered.length !== operations.length) {
      fail(`the page at ${base}/docs rendered ${rendered.length} operation blocks for the document's ${operations.length} (missing: ${missing.map((op) => op.id).join(', ') || 'none'}; failed requests: ${failed.join(', ') || 'none'})`);
    }
    await authorize(page);
    const statuses = [];
    for (const op of operations) statuses.push(`${op.method.toUpperCase()} ${op.path} ${await executeUnchanged(page, op)}`);
    if (elsewhere.length > 0) fail(`the page fetched from elsewhere than ${base}: ${[...new Set(elsewhere)].join(', ')}`);
    if (failed.length > 0) fail(`requests of the page failed: ${failed.join(', ')}`);

    const after = await snapshot(base);
    const changed = difference(before, after);
    if (changed) fail(`Execute with unchanged examples changed something (answers: ${statuses.join('; ')})\n${changed}`);
    console.log(`swagger-execute: ${base}/docs rendered all ${operations.length} operations fetching only its own origin; Execute unchanged on every one (${statuses.join('; ')}) left the store and the journal (${before.journal.length} entries) as they were`);
  } finally {
    await browser?.close();
    try {
      process.kill(-service.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    if (service.exitCode === null) await once(service, 'exit');
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
