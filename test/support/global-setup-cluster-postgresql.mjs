// Global setup of the PostgreSQL pass's cluster suites (jest.config.mjs): both.
import { startCluster, startPostgres } from './jest-global-setup.mjs';

export default function setup() {
  startCluster();
  startPostgres();
}
