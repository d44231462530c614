import { once } from 'node:events';
import { createServer, type Server } from 'node:http';

/** One span as an OTLP/HTTP JSON export carries it, ids in hex. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
}

/**
 * A local OTLP/HTTP receiver (POST /v1/traces, JSON encoding: OTEL_EXPORTER_OTLP_PROTOCOL=http/json),
 * keeping every span it was sent.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(
      createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          if (req.method === 'POST' && req.url === '/v1/traces') receiver.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        });
      }),
    );
    receiver.server.listen(0, '127.0.0.1');
    await once(receiver.server, 'listening');
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private take(body: { resourceSpans?: { scopeSpans?: { spans?: RawSpan[] }[] }[] }): void {
    for (const resource of body.resourceSpans ?? []) {
      for (const scope of resource.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: hex(span.traceId),
            spanId: hex(span.spanId),
            parentSpanId: hex(span.parentSpanId),
            name: span.name,
            kind: span.kind,
            attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, Object.values(a.value ?? {})[0]])),
            status: span.status ?? {},
          });
        }
      }
    }
  }
}

interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value?: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

/** OTLP JSON ids are hex; protobuf's JSON mapping would be base64: accept both. */
function hex(id: string | undefined): string {
  if (!id) return '';
  return /^[0-9a-f]+$/.test(id) && (id.length === 32 || id.length === 16) ? id : Buffer.from(id, 'base64').toString('hex');
}
