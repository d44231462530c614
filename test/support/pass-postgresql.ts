// setupFiles of the PostgreSQL pass (test/passes.mjs): the suite's stores are new databases on the
// server test/support/jest-global-setup.mjs started (or the one TEST_DATABASE_URL named).
const server = process.env.TEST_PG_SERVER_URL;
if (!server) throw new Error('the PostgreSQL pass needs TEST_PG_SERVER_URL, which its global setup sets (test/support/jest-global-setup.mjs)');
process.env.TEST_DATABASE_URL = server;
