import { describe, expect, it } from '@jest/globals';
import { CreateAgentDto, UpdateAgentDto, ValidateAgentDto } from '@app/agents';
import { readInput } from './input.js';
import { MAX_ANNOTATION_BYTES, MAX_LABELS } from './validators.js';

const valid = { name: 'helper', namespace: 'agents', modelConfig: 'default-model-config', toolset: ['preset:read-only'] };
const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
/** One annotation of `bytes` bytes in all (key "big" plus its value). */
const annotations = (bytes: number) => ({ big: 'x'.repeat(bytes - 3) });

describe('labels and annotations caps', () => {
  it.each([
    ['create', CreateAgentDto, valid],
    ['update', UpdateAgentDto, {}],
    ['validate', ValidateAgentDto, { name: 'helper', namespace: 'agents' }],
  ])('%s refuses more than 64 labels with a 400 naming the cap', (_door, cls, base) => {
    expect(readInput(cls as typeof CreateAgentDto, { ...base, labels: labels(MAX_LABELS) }).violations).toEqual([]);
    const { violations } = readInput(cls as typeof CreateAgentDto, { ...base, labels: labels(50_000) });
    expect(violations).toEqual([{ path: 'labels', message: expect.stringMatching(/has 50000 labels, more than the 64 allowed/) }]);
  });

  it('refuses annotations over 256 KiB less 2 KiB in total', () => {
    expect(readInput(CreateAgentDto, { ...valid, annotations: annotations(MAX_ANNOTATION_BYTES) }).violations).toEqual([]);
    const { violations } = readInput(CreateAgentDto, { ...valid, annotations: annotations(256 * 1024 + 1) });
    expect(violations).toEqual([{ path: 'annotations', message: expect.stringMatching(/^annotations: total 262145 bytes .*more than the 260096 allowed.*256 KiB/) }]);
  });

  it('counts UTF-8 bytes, not characters, as the API server does', () => {
    const { violations } = readInput(CreateAgentDto, { ...valid, annotations: { big: 'ü'.repeat(200_000) } });
    expect(violations).toEqual([{ path: 'annotations', message: expect.stringMatching(/total 400003 bytes/) }]);
  });

  it('counts keys too, over many small annotations', () => {
    const many = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`key-${i}`, 'value']));
    const { violations } = readInput(UpdateAgentDto, { annotations: many });
    expect(violations.map((v) => v.path)).toEqual(['annotations']);
    expect(violations[0].message).toMatch(/more than the 260096 allowed/);
  });
});
