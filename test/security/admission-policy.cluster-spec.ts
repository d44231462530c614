// npm test: also with helm 3 — the admission refusal each major relays, and its wording
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AdmissionregistrationV1Api, KubeConfig } from '@kubernetes/client-node';
import { TestCluster } from '../support/cluster.js';
import { call, startTestApp, type TestApp } from '../support/test-app.js';

/**
 * A cluster's admission policy refusing an Agent (Gatekeeper, Kyverno and the like are validating
 * webhooks) is the caller's to fix: 400 with the policy's own words, not 502 "helm failed". A
 * real validating webhook (an HTTPS server in this process, registered with the real API server)
 * refuses Agents without a `team` label in one namespace.
 */
jest.setTimeout(120_000);

// Unique per run: the helm 3 pass runs this suite beside the helm 4 one, on the same API server.
const RUN = randomBytes(4).toString('hex');
const WEBHOOK = `agent-manager-test-require-team-${RUN}`;

describe("the cluster's admission policy", () => {
  let t: TestApp;
  let cluster: TestCluster;
  let admission: AdmissionregistrationV1Api;
  let webhook: Server;
  let dir: string;
  let ns: string;

  beforeAll(async () => {
    cluster = TestCluster.fromEnv();
    dir = mkdtempSync(join(tmpdir(), 'admission-'));
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1']);
    webhook = createServer({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string; object: { metadata: { labels?: Record<string, string> } } } };
        const allowed = review.request.object.metadata.labels?.team !== undefined;
        const response = { uid: review.request.uid, allowed, ...(!allowed && { status: { code: 403, message: '[must-have-team] you must provide labels: {"team"}' } }) };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    ns = `policed-${RUN}`;
    await cluster.createNamespace(ns, { 'agent-manager-test/policed': RUN });
    const config = new KubeConfig();
    config.loadFromFile(cluster.kubeconfig);
    admission = config.makeApiClient(AdmissionregistrationV1Api);
    await admission.createValidatingWebhookConfiguration({
      body: {
        metadata: { name: WEBHOOK },
        webhooks: [
          {
            name: 'require-team.agent-manager.test',
            clientConfig: { url: `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/validate`, caBundle: readFileSync(cert).toString('base64') },
            rules: [{ apiGroups: ['kagent.dev'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['agents'] }],
            namespaceSelector: { matchLabels: { 'agent-manager-test/policed': RUN } },
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 5,
          },
        ],
      },
    });
    // The automatic reconcile pass is not under test here, and it reads every agent with `helm status`
    // on each sweep: off, as in the other cluster suites that do not test it.
    t = await startTestApp({ KUBECONFIG: cluster.kubeconfig, HELM_TIMEOUT_SECONDS: '60', RECONCILE_AUTOMATIC: 'false' });
  });

  afterAll(async () => {
    await admission?.deleteValidatingWebhookConfiguration({ name: WEBHOOK }).catch(() => undefined);
    await t?.close();
    await new Promise((resolve) => webhook?.close(resolve));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a create it denies with 400 and the policy message, leaves no agent, and lets a compliant create through', async () => {
    const agent = { namespace: ns, name: 'unlabelled', modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
    // The webhook may take a moment to be called by the API server after its registration.
    let refused = await call(t.url, 'POST', '/api/v1/agents', agent);
    for (let i = 0; refused.status === 201 && i < 10; i++) {
      await call(t.url, 'DELETE', `/api/v1/agents/${ns}/unlabelled`);
      await new Promise((resolve) => setTimeout(resolve, 500));
      refused = await call(t.url, 'POST', '/api/v1/agents', agent);
    }
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('invalid_request');
    expect(refused.body.error.message).toMatch(/admission policy refused the Agent \(admission webhook "require-team\.agent-manager\.test"\): .*you must provide labels: \{"team"\}/);
    expect((await call(t.url, 'GET', `/api/v1/agents/${ns}/unlabelled`)).status).toBe(404);

    const compliant = await call(t.url, 'POST', '/api/v1/agents', { ...agent, name: 'labelled', labels: { team: 'sre' } });
    expect(compliant.status).toBe(201);
  });
});
