import { describe, expect, it } from '@jest/globals';
import { installArgs, pullArgs, upgradeInstallArgs, type WriteCommand } from './helm-commands.js';
import { MANAGED_RELEASE_LABEL } from './release-storage.js';

const command = (major: number): WriteCommand => ({
  release: { namespace: 'team-a', name: 'triage' },
  chart: { ref: 'charts/agent', version: '0.6.0' },
  valuesFile: '/tmp/values.json',
  major,
  wait: false,
  timeoutSeconds: 60,
});

/** The label's argument pair in `args`, or undefined. */
function labels(args: string[]): string | undefined {
  const at = args.indexOf('--labels');
  return at < 0 ? undefined : args[at + 1];
}

describe('helm write commands', () => {
  it.each<[string, (c: WriteCommand) => string[], number]>([
    ['install, helm 3', installArgs, 3],
    ['install, helm 4', installArgs, 4],
    ['upgrade --install, helm 3', upgradeInstallArgs, 3],
    ['upgrade --install, helm 4', upgradeInstallArgs, 4],
  ])('%s labels the release as agent-manager\'s, so the watches select it', (_, build, major) => {
    expect(labels(build(command(major)))).toBe(`${MANAGED_RELEASE_LABEL}=true`);
  });
});

describe('helm pull', () => {
  it('unpacks the chart of a version into the destination, over plain http only when asked', () => {
    const chart = { ref: 'oci://127.0.0.1:5000/charts/agent', version: '0.6.1' };
    expect(pullArgs(chart, '/cache/x')).toEqual(['pull', chart.ref, '--version', '0.6.1', '--untar', '--destination', '/cache/x']);
    expect(pullArgs(chart, '/cache/x', { plainHttp: true })).toEqual(['pull', chart.ref, '--version', '0.6.1', '--untar', '--destination', '/cache/x', '--plain-http']);
  });
});
