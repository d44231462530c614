// Swagger UI in a real browser (Debian's chromium, driven by puppeteer-core): a newcomer opens
// /docs, expands "Create an agent", presses "Try it out" and "Execute" without changing the body.
// The answer must be the 200 dry run, and nothing may be written (GET /api/v1/agents lists none).
// Then the same with authentication on (an API token): Execute without Authorize answers 401;
// after Authorize with the token, the same Execute answers the 200 dry run.
// Starts the service with `npm start` on a temp SQLite file and a free port; leaves screenshots.
// Env: CHROMIUM (default /usr/bin/chromium), SCREENSHOT (default $TMPDIR/agent-manager-swagger-ui.png;
// the run with auth writes <name>-auth.png beside it)
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer from 'puppeteer-core';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
const screenshot = process.env.SCREENSHOT ?? join(tmpdir(), 'agent-manager-swagger-ui.png');
const START_TIMEOUT_MS = 180_000; // npm start builds dist/ first when it is stale: about a minute on 2 busy cores

function fail(message) {
  throw new Error(`swagger-ui: ${message}`);
}

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
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

const OP = '#operations-agents-createAgent';
const RESPONSE = `${OP} .live-responses-table tbody`;

/** Opens /docs, expands create, presses Try it out; checks and returns the body offered. */
async function openCreate(browser, base) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 2000 });
  await page.goto(`${base}/docs`, { waitUntil: 'networkidle0' });
  await page.waitForSelector(`${OP} .opblock-summary`);
  await page.click(`${OP} .opblock-summary`);
  await page.waitForSelector(`${OP} .try-out__btn`);
  await page.click(`${OP} .try-out__btn`);
  const body = await page.$eval(`${OP} textarea.body-param__text`, (el) => el.value);
  const offered = JSON.parse(body);
  if (offered.dryRun !== true) fail(`the body offered is not a dry run: ${body}`);
  for (const trap of ['requestId', 'additionalProp', '"string"']) if (body.includes(trap)) fail(`the body offered contains ${trap}: ${body}`);
  return { page, body };
}

/** Presses Execute and waits until Swagger UI shows the answer to that request. */
async function execute(page) {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/api/v1/agents'),
    page.click(`${OP} .execute`),
  ]);
  const expected = String(response.status());
  await page.waitForFunction((selector, code) => globalThis.document.querySelector(selector)?.textContent?.trim() === code, {}, `${RESPONSE} .response-col_status`, expected);
  const shown = await page.$eval(`${RESPONSE} .response-col_description pre`, (el) => el.textContent ?? '');
  return { status: expected, shown, authorization: response.request().headers().authorization };
}

async function screenshotOf(page, path) {
  await page.$eval(`${OP} .live-responses-table`, (el) => el.scrollIntoView());
  await page.screenshot({ path, fullPage: false });
}

/** The Authorize dialog: the bearer token typed in, Authorize, Close. */
async function authorize(page, token) {
  await page.click('.auth-wrapper .btn.authorize');
  await page.waitForSelector('.modal-ux .auth-container input');
  await page.type('.modal-ux .auth-container input', token);
  await page.click('.modal-ux .auth-btn-wrapper .btn.authorize');
  await page.waitForSelector('.modal-ux .auth-btn-wrapper .btn-done');
  await page.click('.modal-ux .auth-btn-wrapper .btn-done');
  await page.waitForSelector('.modal-ux', { hidden: true });
}

function dryRunAnswer(status, shown) {
  if (status !== '200') fail(`Execute answered ${status}, not the 200 of a dry run: ${shown.slice(0, 500)}`);
  const answer = JSON.parse(shown);
  if (answer.dryRun !== true || answer.agent !== null) fail(`the answer is not a dry run: ${shown.slice(0, 500)}`);
}

async function nothingWritten(base, headers = {}) {
  const listed = await (await fetch(`${base}/api/v1/agents?status=all`, { headers })).json();
  if (!Array.isArray(listed.items)) fail(`GET /api/v1/agents did not list: ${JSON.stringify(listed).slice(0, 300)}`);
  if (listed.items.length !== 0) fail(`Execute wrote something: GET /api/v1/agents lists ${listed.items.map((a) => `${a.namespace}/${a.name}`).join(', ')}`);
}

async function unchangedDryRun(browser, base) {
  const { page, body } = await openCreate(browser, base);
  const { status, shown } = await execute(page);
  await screenshotOf(page, screenshot);
  dryRunAnswer(status, shown);
  await nothingWritten(base);
  return `Try it out on createAgent, unchanged (${body.replace(/\s+/g, ' ')}), answered 200 dryRun with agent null; nothing was written (screenshot: ${screenshot})`;
}

const TOKEN = 'am_swagger_ui_3f7a9c1e5b2d4f60a8e1c3b5d7f9a2c4';

/** The service's environment with authentication on: one API token (token:swagger), admin by the policy. */
function authEnv(scratch) {
  const tokens = join(scratch, 'tokens.yaml');
  writeFileSync(tokens, `- name: swagger\n  sha256: ${createHash('sha256').update(TOKEN).digest('hex')}\n`);
  const policy = join(scratch, 'policy.yaml');
  writeFileSync(policy, 'roles:\n  admin: ["*"]\nbindings:\n  - role: admin\n    subjects: ["token:swagger"]\n    namespaces: ["*"]\n');
  return { API_TOKENS_FILE: tokens, AUTHZ_POLICY_FILE: policy };
}

async function authorizedDryRun(browser, base) {
  const { page } = await openCreate(browser, base);
  const refused = await execute(page);
  if (refused.status !== '401') fail(`Execute without Authorize answered ${refused.status}, not 401: ${refused.shown.slice(0, 500)}`);
  if (JSON.parse(refused.shown).error?.code !== 'unauthenticated') fail(`the 401 is not the error model's unauthenticated: ${refused.shown.slice(0, 500)}`);
  await authorize(page, TOKEN);
  const { status, shown, authorization } = await execute(page);
  const path = screenshot.replace(/(\.png)?$/, '-auth.png');
  await screenshotOf(page, path);
  if (authorization !== `Bearer ${TOKEN}`) fail(`after Authorize the request carried Authorization ${JSON.stringify(authorization)}, not the token as a bearer`);
  dryRunAnswer(status, shown);
  await nothingWritten(base, { authorization: `Bearer ${TOKEN}` });
  return `with auth on, Execute answered 401 unauthenticated, then 200 dryRun after Authorize with an API token (screenshot: ${path})`;
}

/** Runs `check` against a service started with `npm start` and `extra` settings, and a browser. */
async function withService(scratch, extra, check) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${join(scratch, `agent-manager-${port}.db`)}`, LOG_LEVEL: 'warn', ...extra };
  const service = spawn('npm', ['start', '--silent'], { cwd: root, env, detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
  let browser;
  try {
    await waitHealthy(base, service);
    browser = await puppeteer.launch({
      executablePath: chromium,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--user-data-dir=${join(scratch, `chromium-${port}`)}`,
      ],
    });
    return await check(browser, base);
  } finally {
    await browser?.close();
    try {
      process.kill(-service.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    if (service.exitCode === null) await once(service, 'exit');
  }
}

async function main() {
  if (!existsSync(chromium)) fail(`${chromium} not found: apt-get install chromium (or set CHROMIUM)`);
  const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-swagger-'));
  try {
    const open = await withService(scratch, {}, unchangedDryRun);
    const secured = await withService(scratch, authEnv(scratch), authorizedDryRun);
    console.log(`swagger-ui: ${open}; ${secured}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
});
