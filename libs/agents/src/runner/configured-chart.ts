import type { AppConfig } from '@app/common';
import type { ChartSource, ChartSources } from '@app/helm';

/**
 * The chart a write uses when it names none, decided here only: ChartSources.configured()
 * (AGENT_CHART, or the bundled chart while an OCI AGENT_CHART cannot be pulled); without
 * ChartSources (suites that wire the parts by hand), AppConfig.agentChart as given. The write
 * runner uses it, and recovery for a create journaled without its chart (by an earlier version).
 */
export function configuredChart(config: AppConfig, charts?: ChartSources): Promise<ChartSource> {
  return charts ? charts.configured() : Promise.resolve(config.agentChart);
}
