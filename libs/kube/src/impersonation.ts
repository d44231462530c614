import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeIdentity } from '@app/common';
import type { ConfigurationOptions, RequestContext, ResponseContext } from '@kubernetes/client-node';

type KubeModule = typeof import('@kubernetes/client-node');

/**
 * Per-call options that send a request as `identity`: Impersonate-User, and one Impersonate-Group
 * header line per group. The client's own HTTP library keeps one value per header name, and the
 * API server reads "a, b" in one line as a single group named "a, b"; so this library sends the
 * request itself (node:http, with the agent the kubeconfig's TLS and credentials configured).
 */
export function impersonating(k8s: KubeModule, identity: KubeIdentity): ConfigurationOptions {
  return { httpApi: k8s.wrapHttpLibrary({ send: (request) => send(k8s, request, identity) }) };
}

function send(k8s: KubeModule, request: RequestContext, identity: KubeIdentity): Promise<ResponseContext> {
  const url = new URL(request.getUrl());
  const headers: Record<string, string | string[]> = { ...request.getHeaders(), 'Impersonate-User': identity.user };
  if (identity.groups.length > 0) headers['Impersonate-Group'] = identity.groups;
  const body = request.getBody();
  const open = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = open(url, { method: request.getHttpMethod(), headers, agent: request.getAgent(), signal: request.getSignal() }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () => {
        const flat = Object.fromEntries(Object.entries(res.headers).map(([key, value]) => [key, Array.isArray(value) ? value.join(', ') : (value ?? '')]));
        resolve(new k8s.ResponseContext(res.statusCode ?? 0, flat, new k8s.SelfDecodingBody(Promise.resolve(Buffer.concat(chunks)))));
      });
    });
    req.on('error', reject);
    if (typeof body === 'string') req.write(body);
    req.end();
  });
}
