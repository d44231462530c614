import { describe, expect, it } from '@jest/globals';
import { parsePrometheusText } from '../../../test/support/prometheus-text.js';
import { Metrics, withoutUnsetSamples } from './metrics.js';

describe(Metrics.name, () => {
  it('keeps what is recorded before prom-client loaded and scrapes it with Prometheus names', async () => {
    const metrics = new Metrics();
    metrics.httpRequest({ method: 'POST', route: '/api/v1/agents', status: 201, outcome: 'ok' }, 0.2);
    metrics.helmProcess('install', false, 1.5);
    metrics.watchHelmPool(() => ({ concurrency: 4, inUse: 1, queued: 2, refused: 3 }));
    metrics.watchJournal(async () => ({ pending: 1, succeeded: 5 }));
    metrics.setBlueprintToolsServed(7);
    const { contentType, text } = await metrics.scrape();
    expect(contentType).toContain('text/plain');
    expect(text).toContain('agent_manager_http_requests_total{method="POST",route="/api/v1/agents",outcome="ok",status="201"} 1');
    expect(text).toContain('agent_manager_helm_process_failures_total{subcommand="install"} 1');
    expect(text).toContain('agent_manager_helm_process_duration_seconds_count{subcommand="install",outcome="failed"} 1');
    expect(text).toContain('agent_manager_helm_queue_length 2');
    expect(text).toContain('agent_manager_helm_pool_refusals_total 3');
    expect(text).toContain('agent_manager_journal_operations{state="succeeded"} 5');
    expect(text).toContain('agent_manager_blueprint_tools_served 7');
  });

  it('keeps one registry per service: two apps in one process count apart', async () => {
    const [a, b] = [new Metrics(), new Metrics()];
    a.toolCall('get_agent', 'ok', 0.01);
    expect((await a.scrape()).text).toContain('agent_manager_mcp_tool_calls_total{tool="get_agent",outcome="ok"} 1');
    expect((await b.scrape()).text).not.toContain('agent_manager_mcp_tool_calls_total{');
  });
});

describe(withoutUnsetSamples.name, () => {
  it('leaves out the event loop delay statistics until the delay histogram has a sample, and any sample written as Nan', () => {
    const text = [
      '# TYPE nodejs_eventloop_lag_seconds gauge',
      'nodejs_eventloop_lag_seconds 0',
      '# TYPE nodejs_eventloop_lag_min_seconds gauge',
      'nodejs_eventloop_lag_min_seconds 9223372036.854776',
      '# TYPE nodejs_eventloop_lag_mean_seconds gauge',
      'nodejs_eventloop_lag_mean_seconds Nan',
      '# TYPE nodejs_eventloop_lag_p50_seconds gauge',
      'nodejs_eventloop_lag_p50_seconds 5.11e-7',
      '# TYPE other_gauge gauge',
      'other_gauge{a="b"} Nan',
      'other_gauge{a="c"} 2',
      '',
    ].join('\n');
    expect(withoutUnsetSamples(text).split('\n')).toEqual([
      '# TYPE nodejs_eventloop_lag_seconds gauge',
      'nodejs_eventloop_lag_seconds 0',
      '# TYPE nodejs_eventloop_lag_min_seconds gauge',
      '# TYPE nodejs_eventloop_lag_mean_seconds gauge',
      '# TYPE nodejs_eventloop_lag_p50_seconds gauge',
      '# TYPE other_gauge gauge',
      'other_gauge{a="c"} 2',
      '',
    ]);
  });

  it('keeps the statistics once the histogram has a sample', () => {
    const text = 'nodejs_eventloop_lag_min_seconds 0.01\nnodejs_eventloop_lag_mean_seconds 0.012\n';
    expect(withoutUnsetSamples(text)).toBe(text);
  });

  it('makes a scrape at once after start, before any delay was sampled, parse under the text format (no Nan)', async () => {
    const { text } = await new Metrics().scrape();
    expect(text).not.toMatch(/ Nan$/m);
    expect(() => parsePrometheusText(text)).not.toThrow();
    expect(text).toContain('# TYPE nodejs_eventloop_lag_mean_seconds gauge');
  });
});
