export { KubeClient, AGENT_GROUP, AGENT_PLURAL, AGENT_VERSION } from './kube.client.js';
export type { Condition, LiveAgent } from './kube.client.js';
export { KubeModule } from './kube.module.js';
