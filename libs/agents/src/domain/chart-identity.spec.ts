import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from '@app/common';
import { chartIdentity, chartNameOf } from './chart-identity.js';

describe(chartNameOf.name, () => {
  it.each([
    ['/opt/agent-manager/charts/agent', 'agent'],
    ['/opt/agent-manager/charts/agent/', 'agent'],
    ['charts/agent', 'agent'],
    ['oci://registry.example.com/charts/agent', 'agent'],
    ['myrepo/agent', 'agent'],
    ['./agent-0.6.0.tgz', 'agent'],
    ['/tmp/agent-v1.2.3-rc.1.tgz', 'agent'],
    ['', 'unknown'],
  ])('names %s %s', (ref, name) => {
    expect(chartNameOf(ref)).toBe(name);
  });
});

const shipped = parse(readFileSync(join(PROJECT_ROOT, 'charts', 'agent', 'Chart.yaml'), 'utf8')) as { name: string; version: string };

describe(chartIdentity.name, () => {
  it("reads a local chart's name and version from its Chart.yaml", () => {
    expect(chartIdentity({ ref: join(PROJECT_ROOT, 'charts', 'agent') })).toEqual({ name: shipped.name, version: shipped.version });
  });

  it('takes a version helm reported (an adopted release) over the local Chart.yaml', () => {
    expect(chartIdentity({ ref: join(PROJECT_ROOT, 'charts', 'agent'), version: '0.5.0' })).toEqual({ name: 'agent', version: '0.5.0' });
  });

  it('names a remote chart by its last segment and the version asked for', () => {
    expect(chartIdentity({ ref: 'oci://registry.example.com/charts/agent', version: '0.7.1' })).toEqual({ name: 'agent', version: '0.7.1' });
    expect(chartIdentity({ ref: 'oci://registry.example.com/charts/agent' })).toEqual({ name: 'agent', version: null });
  });
});
