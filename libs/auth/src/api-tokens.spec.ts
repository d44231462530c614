import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '@app/common';
import { ApiTokens, ApiTokensFileError, parseApiTokens, sha256Hex } from './api-tokens.js';

const CI = 'am_ci_3f9c1b7e5d2a4c6b8e0f1a2b3c4d5e6f';
const PORTAL = 'am_portal_0a1b2c3d4e5f60718293a4b5c6d7e8f9';

function problemsOf(text: string): string[] {
  try {
    parseApiTokens(text, 'tokens.yaml');
  } catch (error) {
    expect(error).toBeInstanceOf(ApiTokensFileError);
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ApiTokensFileError).problems;
  }
  throw new Error('the file was accepted');
}

describe(parseApiTokens.name, () => {
  it('reads YAML and JSON lists, lower-casing the hash and defaulting groups', () => {
    const yaml = `- name: ci-platform\n  sha256: ${sha256Hex(CI).toUpperCase()}\n  groups: [platform]\n- name: portal\n  sha256: ${sha256Hex(PORTAL)}\n`;
    expect(parseApiTokens(yaml)).toEqual([
      { name: 'ci-platform', sha256: sha256Hex(CI), groups: ['platform'] },
      { name: 'portal', sha256: sha256Hex(PORTAL), groups: [] },
    ]);
    expect(parseApiTokens(JSON.stringify([{ name: 'ci', sha256: sha256Hex(CI), groups: [] }]))).toEqual([{ name: 'ci', sha256: sha256Hex(CI), groups: [] }]);
    expect(parseApiTokens('[]')).toEqual([]);
  });

  const hash = sha256Hex(CI);
  it.each([
    ['a mapping instead of a list', `ci: {sha256: ${hash}}`, 'the file must be a list of tokens'],
    ['a hash that is not SHA-256 hex', `- {name: ci, sha256: abc123}`, '[0] ("ci").sha256: must be 64 hex digits'],
    ['a missing name', `- {sha256: ${hash}}`, '[0].name: must be 1-63 letters'],
    ['a name with a space', `- {name: "c i", sha256: ${hash}}`, '[0] ("c i").name: must be 1-63 letters'],
    ['groups that are not a list', `- {name: ci, sha256: ${hash}, groups: platform}`, '[0] ("ci").groups: must be a list of group names'],
    ['an entry that is not a mapping', `- {name: ci, sha256: ${hash}}\n- just-a-string`, '[1]: not a mapping'],
    ['a misspelt key', `- {name: ci, sha: ${hash}}`, '[0] ("ci"): unknown key "sha"'],
    ['two entries with one name', `- {name: ci, sha256: ${hash}}\n- {name: ci, sha256: ${sha256Hex(PORTAL)}}`, 'token name "ci" is declared twice'],
    ['two entries with one hash', `- {name: ci, sha256: ${hash}}\n- {name: ci2, sha256: ${hash}}`, 'tokens "ci" and "ci2" have the same sha256'],
  ])('refuses %s, naming the entry', (_case, text, problem) => {
    expect(problemsOf(text).join('\n')).toContain(problem);
  });

  it('refuses a plain token, saying to store its hash, without repeating the token', () => {
    const problems = problemsOf(`- {name: ci, token: ${CI}}`);
    expect(problems.join('\n')).toContain('[0] ("ci"): unknown key "token": store only the SHA-256 of the token (sha256), never the token itself');
    expect(problems.join('\n')).not.toContain(CI);
  });

  it('names the file and every bad entry at once', () => {
    expect(() => parseApiTokens(`- {name: a, sha256: x}\n- {name: b, sha256: y}`, '/etc/am/tokens.yaml')).toThrow(
      /^API_TOKENS_FILE \/etc\/am\/tokens\.yaml is not usable:\n {2}\[0\] \("a"\)\.sha256: .*\n {2}\[1\] \("b"\)\.sha256: /,
    );
  });
});

describe(ApiTokens.name, () => {
  const tokens = new ApiTokens(parseApiTokens(`- {name: ci-platform, sha256: ${sha256Hex(CI)}, groups: [platform]}\n- {name: portal, sha256: ${sha256Hex(PORTAL)}}`));

  it.each([
    [CI, { subject: 'token:ci-platform', groups: ['platform'], method: 'token' }],
    [PORTAL, { subject: 'token:portal', groups: [], method: 'token' }],
    [`${CI}x`, undefined],
    [CI.slice(0, -1), undefined],
    [sha256Hex(CI), undefined],
    ['', undefined],
  ])('%s → %j', (token, principal) => {
    expect(tokens.match(token)).toEqual(principal);
  });
});
