// Global setup of the PostgreSQL pass's projects without cluster suites (jest.config.mjs).
import { startPostgres } from './jest-global-setup.mjs';

export default startPostgres;
