export { KubeClient, AGENT_GROUP, AGENT_PLURAL, AGENT_VERSION } from './kube.client.js';
export type { Condition, LiveAgent } from './kube.client.js';
export { KubeModule } from './kube.module.js';
export { ClusterState, clusterReportWithoutPaths } from './cluster-state.js';
export type { ClusterReport } from './cluster-state.js';
export { readClusterConfig } from './cluster-config.js';
export type { ClusterConfig, ClusterEnv } from './cluster-config.js';
