// Swagger UI in a real browser (Debian's chromium, driven by puppeteer-core): a newcomer opens
// /docs, expands "Create an agent", presses "Try it out" and "Execute" without changing the body.
// The answer must be the 200 dry run, and nothing may be written (GET /api/v1/agents lists none).
// Starts the service with `npm start` on a temp SQLite file and a free port; leaves a screenshot.
// Env: CHROMIUM (default /usr/bin/chromium), SCREENSHOT (default $TMPDIR/agent-manager-swagger-ui.png)
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
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

async function tryCreateUnchanged(browser, base) {
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 2000 });
  await page.goto(`${base}/docs`, { waitUntil: 'networkidle0' });
  const op = '#operations-agents-createAgent';
  await page.waitForSelector(`${op} .opblock-summary`);
  await page.click(`${op} .opblock-summary`);
  await page.waitForSelector(`${op} .try-out__btn`);
  await page.click(`${op} .try-out__btn`);
  const body = await page.$eval(`${op} textarea.body-param__text`, (el) => el.value);
  const offered = JSON.parse(body);
  if (offered.dryRun !== true) fail(`the body offered is not a dry run: ${body}`);
  for (const trap of ['requestId', 'additionalProp', '"string"']) if (body.includes(trap)) fail(`the body offered contains ${trap}: ${body}`);
  await page.click(`${op} .execute`);
  await page.waitForSelector(`${op} .live-responses-table tbody .response-col_status`);
  const status = (await page.$eval(`${op} .live-responses-table tbody .response-col_status`, (el) => el.textContent ?? '')).trim();
  const shown = await page.$eval(`${op} .live-responses-table tbody .response-col_description pre`, (el) => el.textContent ?? '');
  await page.$eval(`${op} .live-responses-table`, (el) => el.scrollIntoView());
  await page.screenshot({ path: screenshot, fullPage: false });
  return { status, shown, body };
}

async function main() {
  if (!existsSync(chromium)) fail(`${chromium} not found: apt-get install chromium (or set CHROMIUM)`);
  const scratch = mkdtempSync(join(tmpdir(), 'agent-manager-swagger-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `file:${join(scratch, 'agent-manager.db')}`, LOG_LEVEL: 'warn' };
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
        `--user-data-dir=${join(scratch, 'chromium')}`,
      ],
    });
    const { status, shown, body } = await tryCreateUnchanged(browser, base);
    const answer = JSON.parse(shown);
    if (status !== '200') fail(`Execute answered ${status}, not the 200 of a dry run: ${shown.slice(0, 500)}`);
    if (answer.dryRun !== true || answer.agent !== null) fail(`the answer is not a dry run: ${shown.slice(0, 500)}`);
    const listed = await (await fetch(`${base}/api/v1/agents?status=all`)).json();
    if (listed.items.length !== 0) fail(`Execute wrote something: GET /api/v1/agents lists ${listed.items.map((a) => `${a.namespace}/${a.name}`).join(', ')}`);
    console.log(`swagger-ui: Try it out on createAgent, unchanged (${body.replace(/\s+/g, ' ')}), answered 200 dryRun with agent null; nothing was written (screenshot: ${screenshot})`);
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
