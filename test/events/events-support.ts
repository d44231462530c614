import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { HTTP, type CloudEvent } from 'cloudevents';

/** One request the receiver got: the event as the CloudEvents SDK reads it back, and whether its signature checked out. */
export interface Received {
  path: string;
  event: CloudEvent<Record<string, unknown>>;
  headers: IncomingHttpHeaders;
  signed: boolean;
  /** What the receiver answered. */
  status: number;
}

/**
 * A webhook receiver on loopback, as a consumer would write one: it checks
 * X-Agent-Manager-Signature (HMAC-SHA256 of "<t>.<body>" with the secret) and reads the event in
 * CloudEvents binary mode. It can go down (connections refused) and come up on the same port, and
 * answer 500 to events `refuse` selects.
 */
export class TestReceiver {
  readonly received: Received[] = [];
  refuse: (event: CloudEvent<Record<string, unknown>>) => boolean = () => false;
  private server?: Server;
  port = 0;

  constructor(private readonly secret: string) {}

  async up(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const event = HTTP.toEvent({ headers: req.headers, body }) as CloudEvent<Record<string, unknown>>;
        const status = this.refuse(event) ? 500 : 204;
        this.received.push({ path: req.url ?? '/', event, headers: req.headers, signed: verify(this.secret, String(req.headers['x-agent-manager-signature'] ?? ''), body), status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  async down(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** The events it accepted (2xx) at `path`, in arrival order. */
  accepted(path = '/hook'): CloudEvent<Record<string, unknown>>[] {
    return this.received.filter((r) => r.path === path && r.status < 300).map((r) => r.event);
  }
}

/** The receiver's side of the signature: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function verify(secret: string, header: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  if (!/^\d+$/.test(parts.t ?? '') || !/^[0-9a-f]{64}$/.test(parts.v1 ?? '')) return false;
  const expected = createHmac('sha256', secret).update(`${parts.t}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(parts.v1, 'hex'));
}

/** A WEBHOOKS_FILE `name` in `dir` with these subscriptions. */
export function webhooksFile(dir: string, name: string, hooks: object[]): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(hooks));
  return file;
}

/** Waits (up to 30 s, polling) until `probe` holds; fails naming `what`. */
export async function until(what: string, probe: () => boolean | Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (await probe()) return;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The settings that make the dispatcher quick in a test: real backoff, in milliseconds. */
export const QUICK_WEBHOOKS = { WEBHOOK_POLL_MS: '50', WEBHOOK_BACKOFF_MS: '50', WEBHOOK_BACKOFF_MAX_MS: '200', RECONCILE_AUTOMATIC: 'false' };
