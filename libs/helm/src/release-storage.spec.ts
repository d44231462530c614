import { describe, expect, it } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { decodeReleaseData, encodeReleaseData, releaseSecretName, type StoredRelease } from './release-storage.js';

const release: StoredRelease = {
  name: 'triage',
  namespace: 'team-a',
  version: 3,
  info: { status: 'deployed', description: 'Upgrade complete' },
  chart: { metadata: { name: 'agent', version: '0.6.0' } },
  config: { modelConfig: 'default', toolset: ['preset:read-only'] },
  manifest: 'kind: Agent\n',
};

describe('helm release storage', () => {
  it('reads back what it wrote', () => {
    expect(decodeReleaseData(encodeReleaseData(release))).toEqual(release);
  });

  it('reads an uncompressed release too (helm writes gzip, but reads either)', () => {
    const plain = Buffer.from(Buffer.from(JSON.stringify(release)).toString('base64'), 'latin1').toString('base64');
    expect(decodeReleaseData(plain).config).toEqual(release.config);
    const gzipped = Buffer.from(gzipSync(Buffer.from(JSON.stringify(release))).toString('base64'), 'latin1').toString('base64');
    expect(decodeReleaseData(gzipped).version).toBe(3);
  });

  it('refuses data that is not a release', () => {
    expect(() => decodeReleaseData(Buffer.from(Buffer.from('{"a":1}').toString('base64')).toString('base64'))).toThrow('not a helm release');
  });

  it('names the Secret of a revision as helm does', () => {
    expect(releaseSecretName('triage', 3)).toBe('sh.helm.release.v1.triage.v3');
  });
});
