import { describe, expect, it } from '@jest/globals';
import { clusterReportWithoutPaths, type ClusterReport } from './cluster-state.js';

describe(clusterReportWithoutPaths.name, () => {
  it.each<[string, ClusterReport, string]>([
    [
      'an unreachable server',
      { state: 'unreachable', source: 'KUBECONFIG=/etc/am/kubeconfig', server: 'https://10.0.0.1:6443', reason: 'the cluster is unreachable: KUBECONFIG=/etc/am/kubeconfig points at https://10.0.0.1:6443' },
      'KUBECONFIG',
    ],
    ['a missing kubeconfig', { state: 'not_configured', source: 'KUBECONFIG=/etc/am/missing', server: null, reason: 'KUBECONFIG names /etc/am/missing, which does not exist' }, 'KUBECONFIG'],
    ['the home kubeconfig', { state: 'reachable', source: '/home/am/.kube/config', server: 'https://10.0.0.1:6443', reason: null }, '~/.kube/config'],
    ['the ServiceAccount', { state: 'reachable', source: 'the in-cluster ServiceAccount', server: 'https://10.96.0.1:443', reason: null }, 'the in-cluster ServiceAccount'],
    ['nothing', { state: 'not_configured', source: 'none', server: null, reason: 'no cluster is configured: KUBECONFIG is not set, … no /home/am/.kube/config' }, 'none'],
  ])('names %s by kind, without a path or the server', (_, report, source) => {
    const shown = clusterReportWithoutPaths(report);
    expect(shown).toMatchObject({ state: report.state, source, server: null });
    expect(shown.reason === null).toBe(report.reason === null);
    expect(JSON.stringify(shown)).not.toMatch(/\/etc\/am|\/home\/am|10\.\d+\.\d+\.\d+/);
  });
});
