// Global setup of the cluster projects (jest.config.mjs): the test control plane.
import { startCluster } from './jest-global-setup.mjs';

export default startCluster;
