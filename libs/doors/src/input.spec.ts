import { describe, expect, it } from '@jest/globals';
import { CreateAgentDto, ListAgentsQueryDto, RollbackAgentDto } from '@app/agents';
import { readInput } from './input.js';

const valid = { name: 'helper', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
const paths = (raw: unknown, cls: new () => object = CreateAgentDto) => readInput(cls, raw).violations.map((v) => v.path);

describe(readInput.name, () => {
  it('keeps label keys named like Object.prototype members, exactly as sent', () => {
    const labels = JSON.parse('{"constructor":"a","valueOf":"b","toString":"c","hasOwnProperty":"d","team":"sre"}');
    const { value, violations } = readInput(CreateAgentDto, { ...valid, labels });
    expect(violations).toEqual([]);
    expect(value.labels).toEqual(labels);
  });

  it.each(['constructor', 'hasOwnProperty', '__proto__', 'valueOf', 'extra'])('refuses a top-level field named %s as unknown', (field) => {
    const raw = JSON.parse(`{"${field}": {"x": 1}}`);
    const { violations } = readInput(CreateAgentDto, { ...valid, ...raw });
    expect(violations).toEqual([{ path: field, message: expect.stringMatching(new RegExp(`^unknown field "${field}"`)) }]);
  });

  it.each<[string, string, boolean]>([
    ['tab, newline, CR', 'a\tb\r\nc', true],
    ['form feed, ESC, BEL (escaped on the way)', 'a\u0007b\fc\u001b[0m', true],
    ['NUL (PostgreSQL cannot store it)', 'a\u0000b', false],
    ['NBSP, line and paragraph separators, emoji', 'a\u00a0b\u2028c\u2029d 🚀', true],
    ['DEL', 'a\u007fb', false],
    ['NEL (YAML folds it)', 'a\u0085b', false],
    ['a C1 control', 'a\u009fb', false],
    ['U+FFFE', 'a\ufffeb', false],
    ['an unpaired high surrogate', 'a\ud800b', false],
    ['an unpaired low surrogate', 'a\udc00b', false],
  ])('in a system message: %s is %s', (_, systemMessage, kept) => {
    expect(paths({ ...valid, systemMessage })).toEqual(kept ? [] : ['systemMessage']);
  });

  it('names where a refused character is, in keys and list items too', () => {
    expect(paths({ ...valid, annotations: { 'a\u007f': 'x' } })).toContain('annotations.a\u007f');
    expect(paths({ ...valid, toolset: ['preset:none', 'tool:a\ud800'] })).toContain('toolset[1]');
  });

  it.each<[number, boolean]>([
    [8, true],
    [9, false],
  ])('with a list nested %i deep is readable: %s', (depth, readable) => {
    let toolset: unknown = 'preset:none';
    for (let i = 0; i < depth; i++) toolset = [toolset];
    const result = readInput(CreateAgentDto, { ...valid, toolset });
    expect(result.unreadable).toBe(!readable);
  });

  it.each<[Record<string, unknown>, string]>([
    [{ limit: 'abc' }, 'limit must be a whole number from 1 to 100'],
    [{ label: ['a=b', 'c=d'] }, 'label was sent more than once or as a list: send one value'],
  ])('answers a value of the wrong type in %j with only the type\'s message', (query, message) => {
    expect(readInput(ListAgentsQueryDto, query).violations).toEqual([{ path: Object.keys(query)[0], message }]);
  });

  it('answers a null description with only the type\'s message', () => {
    expect(readInput(CreateAgentDto, { ...valid, description: null }).violations).toEqual([{ path: 'description', message: 'description must be a string' }]);
  });

  it.each<[string, boolean]>([
    ['team=sre', true],
    ['team', true],
    ['example.com/team=', true],
    ['team!=sre', false],
    ['=sre', false],
    ['a=b,c=d', false],
    ['team=not a value', false],
  ])('takes the label filter %s: %s', (label, ok) => {
    expect(paths({ label }, ListAgentsQueryDto)).toEqual(ok ? [] : ['label']);
  });

  it('still converts query strings: limit "5" is the number 5', () => {
    expect(readInput(ListAgentsQueryDto, { limit: '5' })).toMatchObject({ value: { limit: 5 }, violations: [] });
  });

  it.each<[unknown, string]>([
    ['1', 'revision must be a whole number, e.g. 1'],
    [null, 'revision must be a whole number, e.g. 1'],
    [0, 'revision must not be less than 1'],
    [2 ** 31, 'revision is beyond any revision an agent reaches: pick one from list_agent_revisions'],
  ])('refuses revision %j with one message', (revision, message) => {
    expect(readInput(RollbackAgentDto, { revision }).violations).toEqual([{ path: 'revision', message }]);
  });
});
