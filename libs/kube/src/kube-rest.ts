import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** A Kubernetes API answer that was not 2xx: its HTTP status and the Status object's message. */
export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly reason?: string,
  ) {
    super(message);
    this.name = 'KubeApiError';
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

/**
 * Plain requests to the API server with the service's own credentials (the kubeconfig helm uses:
 * KUBECONFIG, else the ServiceAccount, else ~/.kube/config), never impersonating anyone: what the
 * watches and the labelling of older releases use. The answer's body is a stream, so a watch reads
 * it as it arrives and every byte can be counted.
 */
export class KubeRest {
  private constructor(
    private readonly config: KubeConfig,
    readonly server: string,
  ) {}

  /** Loads the kubeconfig (the Kubernetes client, a large import, loads here, not at start). */
  static async load(kubeconfig?: string): Promise<KubeRest> {
    const k8s = await import('@kubernetes/client-node');
    const config = new k8s.KubeConfig();
    if (kubeconfig) config.loadFromFile(kubeconfig);
    else config.loadFromDefault();
    const server = config.getCurrentCluster()?.server;
    if (!server) throw new Error(`the kubeconfig${kubeconfig ? ` ${kubeconfig}` : ''} names no cluster server`);
    return new KubeRest(config, server.replace(/\/+$/, ''));
  }

  /**
   * Opens one request and resolves with the response once its headers arrived (any status): the
   * caller reads or discards the body. `signal` aborts it at any point, the body's stream included.
   */
  async open(method: string, path: string, query: Query, signal: AbortSignal, body?: { contentType: string; text: string }): Promise<IncomingMessage> {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const options: RequestOptions & { headers: Record<string, string> } = { method, headers: { Accept: 'application/json' } };
    // The credentials are applied per request: a ServiceAccount token file is rotated, exec plugins expire.
    await this.config.applyToHTTPSOptions(options);
    if (body) options.headers['Content-Type'] = body.contentType;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(url, { ...options, signal }, resolve);
      req.on('error', reject);
      req.end(body?.text);
    });
  }

  /** One request whose JSON answer is read whole; a non-2xx answer is thrown as a KubeApiError. */
  async json<T>(method: string, path: string, query: Query, signal: AbortSignal, body?: { contentType: string; text: string }): Promise<{ value: T; bytes: number }> {
    const response = await this.open(method, path, query, signal, body);
    const text = await readBody(response);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) throw apiError(status, text);
    return { value: JSON.parse(text) as T, bytes: Buffer.byteLength(text) };
  }
}

/** The whole body of a response as text. */
export async function readBody(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** A KubeApiError from a non-2xx status and its body (a Status object, or anything else). */
export function apiError(status: number, text: string): KubeApiError {
  try {
    const parsed = JSON.parse(text) as { message?: string; reason?: string; code?: number };
    return new KubeApiError(parsed.code ?? status, parsed.message ?? `HTTP ${status}`, parsed.reason);
  } catch {
    return new KubeApiError(status, text.trim().slice(0, 200) || `HTTP ${status}`);
  }
}
