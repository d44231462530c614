import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { AppConfig, ConfigError, loadConfig } from '@app/common';
import { Authenticator, AuthModule, Authorizer, sha256Hex } from '@app/auth';

const OPERATIONS = ['get_info', 'list_agents', 'create_agent'];
const dir = mkdtempSync(join(tmpdir(), 'agent-manager-auth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

async function start(env: Record<string, string>): Promise<{ authenticator: Authenticator; authorizer: Authorizer; close: () => Promise<void> }> {
  const config = loadConfig(env);
  @Module({ providers: [{ provide: AppConfig, useValue: config }], exports: [AppConfig] })
  class ConfigModule {}
  const app = await Test.createTestingModule({ imports: [{ module: ConfigModule, global: true }, AuthModule.forRoot({ operations: OPERATIONS })] }).compile();
  await app.init();
  return { authenticator: app.get(Authenticator), authorizer: app.get(Authorizer), close: () => app.close() };
}

describe(AuthModule.name, () => {
  it('with auth off and no policy: the anonymous caller is admin', async () => {
    const { authenticator, authorizer, close } = await start({});
    const anonymous = await authenticator.authenticate(undefined);
    expect(authorizer.allowedOperations(anonymous)).toEqual(OPERATIONS);
    await close();
  });

  it('reads the token file and the policy at start and applies them', async () => {
    const API_TOKENS_FILE = file('tokens.yaml', `- {name: ci, sha256: ${sha256Hex('secret-ci-token')}, groups: [deployers]}\n`);
    const AUTHZ_POLICY_FILE = file('policy.yaml', 'roles:\n  deployer: [get_info, create_agent]\nbindings:\n  - {role: deployer, groups: [deployers], namespaces: ["apps-*"]}\n');
    const { authenticator, authorizer, close } = await start({ API_TOKENS_FILE, AUTHZ_POLICY_FILE });
    const ci = await authenticator.authenticate('Bearer secret-ci-token');
    expect(ci.subject).toBe('token:ci');
    expect(authorizer.allowedOperations(ci)).toEqual(['get_info', 'create_agent']);
    expect(() => authorizer.authorize(ci, 'create_agent', 'kube-system')).toThrow(/create_agent in namespace "kube-system" is not granted to token:ci \(groups: deployers\) \(it is granted in namespaces "apps-\*"\)/);
    await expect(authenticator.authenticate(undefined)).rejects.toThrow(/authentication is required/);
    await close();
  });

  it('with auth on and no policy: nothing is granted, and the refusal says how to grant', async () => {
    const { authenticator, authorizer, close } = await start({ API_TOKENS_FILE: file('one.yaml', `- {name: ci, sha256: ${sha256Hex('t')}}\n`) });
    const ci = await authenticator.authenticate('Bearer t');
    expect(authorizer.allowedOperations(ci)).toEqual([]);
    expect(() => authorizer.authorize(ci, 'get_info')).toThrow(/no AUTHZ_POLICY_FILE is set, so nothing is granted to anyone yet/);
    await close();
  });

  it.each([
    ['a bad token entry', { API_TOKENS_FILE: 'tokens-bad.yaml' }, `- {name: ok, sha256: ${sha256Hex('a')}}\n- {name: ci, sha256: nothex}\n`, /API_TOKENS_FILE .*tokens-bad\.yaml is not usable:\n {2}\[1\] \("ci"\)\.sha256: must be 64 hex digits/],
    ['a policy naming an unknown operation', { AUTHZ_POLICY_FILE: 'policy-bad.yaml' }, 'roles:\n  r: [delete_agent]\nbindings: []\n', /AUTHZ_POLICY_FILE .*policy-bad\.yaml is not usable:\n {2}roles\.r\[0\]: "delete_agent" is neither an operation nor a role/],
    ['a token file that is not there', { API_TOKENS_FILE: 'missing/tokens.yaml' }, undefined, /API_TOKENS_FILE .*missing\/tokens\.yaml is not usable:\n {2}cannot be read \(ENOENT\)/],
  ])('refuses to start on %s, naming it', async (_case, setting, text, message) => {
    const [[key, name]] = Object.entries(setting);
    const path = text === undefined ? join(dir, name) : file(name, text);
    const started = start({ [key]: path });
    await expect(started).rejects.toThrow(ConfigError);
    await expect(started).rejects.toThrow(message);
  });
});
