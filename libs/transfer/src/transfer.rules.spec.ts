import { describe, expect, it } from '@jest/globals';
import { AppError } from '@app/common';
import { mergeDocuments, readDocument, renderYaml, splitDocument, type FleetAgent, type FleetDocument } from './transfer.document.js';
import { planAgent, planAgents, planBlueprint, selects, type StoredAgent } from './transfer.rules.js';

const SPEC = { modelConfig: 'm', toolset: ['preset:read-only'], labels: { team: 'sre' } };
const entry = (over: Partial<FleetAgent> = {}): FleetAgent => ({ namespace: 'agents', name: 'a', version: 2, spec: SPEC, ...over });
const stored = (over: Partial<StoredAgent> = {}): StoredAgent => ({ namespace: 'agents', name: 'a', version: 2, spec: SPEC, origin: null, ...over });

describe('planning one agent', () => {
  it.each([
    ['absent from the store', 'create', entry(), null],
    ['absent, without a version (written by hand)', 'create', entry({ version: undefined }), null],
    ['the same spec, the same version', 'unchanged', entry(), stored()],
    ['the same spec, another version (re-running an applied import)', 'unchanged', entry({ version: 1 }), stored({ version: 5 })],
    ['another spec, the version exported', 'update', entry({ spec: { ...SPEC, toolset: ['preset:none'] } }), stored()],
    ['another spec, the store moved since the export', 'conflict', entry({ spec: { ...SPEC, toolset: ['preset:none'] } }), stored({ version: 3 })],
    ['another spec, no version in the document (the document wins)', 'update', entry({ version: undefined, spec: { ...SPEC, toolset: ['preset:none'] } }), stored({ version: 9 })],
    ['an empty description is no description', 'unchanged', entry({ spec: { ...SPEC, description: '' } }), stored()],
    ['labels in another order are the same labels', 'unchanged', entry({ spec: { ...SPEC, labels: { b: '2', a: '1' } } }), stored({ spec: { ...SPEC, labels: { a: '1', b: '2' } } })],
  ])('%s → %s', (_case, action, doc, store) => {
    expect(planAgent(doc, store).action).toBe(action);
  });

  it('names the fields an update moves, before → after, and why a conflict is one', () => {
    const plan = planAgent(entry({ spec: { ...SPEC, labels: { team: 'payments' }, description: 'new' } }), stored());
    expect(plan).toMatchObject({ action: 'update', storedVersion: 2 });
    expect(plan.changes).toEqual([
      { path: 'description', after: 'new' },
      { path: 'labels.team', before: 'sre', after: 'payments' },
    ]);
    const conflict = planAgent(entry({ version: 1, spec: { ...SPEC, toolset: ['preset:none'] } }), stored());
    expect(conflict.reason).toMatch(/at version 2 in the store, not 1 as exported/);
  });
});

describe('the selection and prune', () => {
  it.each([
    [{}, stored(), true],
    [{ namespaces: ['agents'] }, stored(), true],
    [{ namespaces: ['other'] }, stored(), false],
    [{ labels: { team: 'sre' } }, stored(), true],
    [{ labels: { team: 'sre', tier: 'gold' } }, stored(), false],
    [{ blueprint: 'helper' }, stored(), false],
    [{ blueprint: 'helper' }, stored({ origin: { blueprint: 'helper', version: 1 } }), true],
  ])('selection %j, agent %#', (selection, agent, picked) => {
    expect(selects(selection, agent as StoredAgent)).toBe(picked);
  });

  it('prunes only agents of the selection the document does not list, and only when asked', () => {
    const store = [stored({ name: 'a' }), stored({ name: 'b' }), stored({ namespace: 'other', name: 'c' })];
    const doc = [entry({ name: 'a' })];
    expect(planAgents(doc, store, { namespaces: ['agents'] }, false).map((p) => `${p.name}:${p.action}`)).toEqual(['a:unchanged']);
    expect(planAgents(doc, store, { namespaces: ['agents'] }, true).map((p) => `${p.name}:${p.action}`)).toEqual(['a:unchanged', 'b:prune']);
  });
});

describe('planning one blueprint', () => {
  const body = { description: 'd', fixed: { modelConfig: 'm' }, open: ['toolset'], defaults: {} };
  it.each([
    ['absent', 'create', { name: 'x', version: 1, ...body }, null],
    ['the same body', 'unchanged', { name: 'x', version: 1, ...body }, { name: 'x', activeVersion: 4, latestVersion: 4, body }],
    ['another body at the version exported', 'update', { name: 'x', version: 4, ...body, description: 'e' }, { name: 'x', activeVersion: 4, latestVersion: 4, body }],
    ['another body, the store moved since', 'conflict', { name: 'x', version: 3, ...body, description: 'e' }, { name: 'x', activeVersion: 4, latestVersion: 4, body }],
  ])('%s → %s', (_case, action, doc, store) => {
    expect(planBlueprint(doc, store).action).toBe(action);
  });
});

describe('the document', () => {
  const doc: FleetDocument = {
    apiVersion: 'agent-manager.io/v1',
    kind: 'AgentFleet',
    selection: { namespaces: ['z', 'agents'] },
    blueprints: [],
    agents: [entry({ name: 'b', spec: { labels: { z: '1', a: '2' }, toolset: ['preset:none'], modelConfig: 'm' } }), entry({ name: 'a' })],
  };

  it('renders in one order whatever order it was built in, and reads back to the same bytes', () => {
    const yaml = renderYaml(doc);
    expect(renderYaml({ ...doc, agents: [...doc.agents].reverse() })).toBe(yaml);
    expect(yaml.indexOf('name: a')).toBeLessThan(yaml.indexOf('name: b'));
    expect(yaml).toMatch(/^apiVersion: agent-manager.io\/v1\nkind: AgentFleet\nselection:\n {2}namespaces:\n {4}- agents\n {4}- z\n/);
    expect(yaml).toMatch(/labels:\n\s+a: "2"\n\s+z: "1"/);
    expect(renderYaml(readDocument(yaml))).toBe(yaml);
  });

  it('splits one file per agent and merges back to the same document', () => {
    const files = splitDocument(doc);
    expect(files.map((f) => f.path)).toEqual(['fleet.yaml', 'agents/a.yaml', 'agents/b.yaml']);
    expect(renderYaml(mergeDocuments(files))).toBe(renderYaml(doc));
  });

  it.each([
    ['apiVersion: v0\nkind: AgentFleet\n', 'apiVersion'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nagents: [{namespace: agents, name: a, spec: {modelConfig: m, toolset: [nope]}}]\n', 'agents[0].spec.toolset[0]'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nagents: [{namespace: Agents, name: a, spec: {modelConfig: m, toolset: ["preset:none"]}}]\n', 'agents[0].namespace'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nagents: [{namespace: agents, name: a, spec: {modelConfig: m, toolset: ["preset:none"], colour: red}}]\n', 'agents[0].spec.colour'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nagents: [{namespace: agents, name: a, version: 0, spec: {modelConfig: m, toolset: ["preset:none"]}}]\n', 'agents[0].version'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nblueprints: [{name: Bad, description: d}]\n', 'blueprints[0].name'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nselection: {namespaces: agents}\n', 'selection.namespaces'],
    ['apiVersion: agent-manager.io/v1\nkind: AgentFleet\nkind: AgentFleet\n', 'document'],
    ['- just a list\n', 'document'],
  ])('refuses %j naming %s', (text, path) => {
    let caught: unknown;
    try {
      readDocument(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).details.map((d) => d.path)).toContain(path);
  });

  it('refuses an agent listed twice', () => {
    const twice = renderYaml(doc).replace('name: b', 'name: a');
    expect(() => readDocument(twice)).toThrow(/listed twice/);
  });
});
