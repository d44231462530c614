import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeIdentity } from '@app/common';
import type { ConfigurationOptions, RequestContext, ResponseContext } from '@kubernetes/client-node';

type KubeModule = typeof import('@kubernetes/client-node');

/**
 * Per-call options for a read: sent with node:http by this library, given up after `timeoutMs`
 * (the client's own library waits for an API server that never answers for good), and with
 * `identity`, as that caller: Impersonate-User, and one Impersonate-Group header line per group.
 * The client's own HTTP library keeps one value per header name, and the API server reads "a, b"
 * in one line as a single group named "a, b". The agent is the one the kubeconfig's TLS and
 * credentials configured.
 */
export function readOptions(k8s: KubeModule, options: { timeoutMs: number; identity?: KubeIdentity }): ConfigurationOptions {
  return {
    httpApi: k8s.wrapHttpLibrary({
      send: (request) => {
        request.setSignal(AbortSignal.timeout(options.timeoutMs));
        return send(k8s, request, options.identity);
      },
    }),
  };
}

function send(k8s: KubeModule, request: RequestContext, identity?: KubeIdentity): Promise<ResponseContext> {
  const url = new URL(request.getUrl());
  const headers: Record<string, string | string[]> = { ...request.getHeaders() };
  if (identity) headers['Impersonate-User'] = identity.user;
  if (identity && identity.groups.length > 0) headers['Impersonate-Group'] = identity.groups;
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
