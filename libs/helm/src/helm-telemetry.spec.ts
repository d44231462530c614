import { describe, expect, it } from '@jest/globals';
import { Metrics } from '@app/telemetry';
import { observeHelm } from './helm-telemetry.js';

describe(observeHelm.name, () => {
  it('counts "release: not found" (a status or uninstall of a release that is gone) as an answer, and a real failure as one', async () => {
    const metrics = new Metrics();
    const observe = observeHelm(metrics);
    await observe(['status', 'gone'], async () => ({ exitCode: 1, stdout: '', stderr: 'Error: release: not found' }));
    await observe(['upgrade', 'x'], async () => ({ exitCode: 1, stdout: '', stderr: 'Error: UPGRADE FAILED: Kubernetes cluster unreachable' }));
    await observe(['rollback', 'gone'], async () => ({ exitCode: 1, stdout: '', stderr: 'Error: release: not found' }));
    const { text } = await metrics.scrape();
    expect(text).toContain('agent_manager_helm_process_duration_seconds_count{subcommand="status",outcome="ok"} 1');
    expect(text).not.toContain('agent_manager_helm_process_failures_total{subcommand="status"}');
    expect(text).toContain('agent_manager_helm_process_failures_total{subcommand="upgrade"} 1');
    // A rollback of a release that is gone did not do what it was asked: a failure.
    expect(text).toContain('agent_manager_helm_process_failures_total{subcommand="rollback"} 1');
  });
});
