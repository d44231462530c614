// The passes of `npm test`, in one place: jest.config.mjs builds its projects from them, and
// scripts/test-all.mjs and test/support/pass-reporter.mjs name and count them.
//
// - sqlite: every suite, on SQLite with helm 4 (what `npx jest` runs by default);
// - helm3: the cluster suites whose outcome depends on helm's major (install, upgrade and rollback
//   flags, the JSON helm prints, its error texts, client- vs server-side apply), again with helm 3;
// - postgresql: the suites that exercise the store (its queries, transactions, locks, leases,
//   JSON columns, rows shared by replicas), again on PostgreSQL.
//
// A suite joins the helm3 or postgresql pass by a line of its own near its top, saying why:
//   // npm test: also with helm 3 — <what of helm's major it depends on>
//   // npm test: also on PostgreSQL — <what of the store it exercises>
// The marker is the list: no second list to keep in step with the files.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The passes `npm test` runs; `AGENT_MANAGER_TEST_PASSES` (comma list) selects; default sqlite. */
export const PASSES = {
  sqlite: { title: 'SQLite + helm 4 (every suite)', report: 'jest-sqlite.json' },
  helm3: { title: 'helm 3 (cluster suites that depend on helm’s major)', report: 'jest-helm3.json', marker: 'also with helm 3', label: 'helm 3' },
  postgresql: { title: 'PostgreSQL (suites that exercise the store)', report: 'jest-postgresql.json', marker: 'also on PostgreSQL', label: 'PostgreSQL' },
};

/** The displayName of a pass's project of one kind of suite: `e2e` (sqlite), `cluster · helm 3`. */
export function projectName(pass, kind) {
  const { label } = PASSES[pass];
  return label ? `${kind} · ${label}` : kind;
}

/** The pass a jest project belongs to, from its displayName (projectName's inverse). */
export function passOfProject(displayName) {
  return Object.keys(PASSES).find((pass) => PASSES[pass].label && displayName.endsWith(` · ${PASSES[pass].label}`)) ?? 'sqlite';
}

/** The passes selected by `AGENT_MANAGER_TEST_PASSES` (unknown names refused, naming the known ones). */
export function selectedPasses(value = process.env.AGENT_MANAGER_TEST_PASSES) {
  const names = (value ?? 'sqlite').split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(name in PASSES));
  if (unknown.length) throw new Error(`AGENT_MANAGER_TEST_PASSES: unknown pass ${unknown.join(', ')} (known: ${Object.keys(PASSES).join(', ')})`);
  return names;
}

const SUITE = /\.(spec|int-spec|e2e-spec|cluster-spec)\.ts$/;

function suiteFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'generated') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...suiteFiles(path));
    else if (SUITE.test(entry.name)) found.push(path);
  }
  return found;
}

/** Suites (paths relative to the repository) that carry the marker of `pass`, per kind of suite. */
export function markedSuites(pass) {
  const { marker } = PASSES[pass];
  const line = new RegExp(`^// npm test: ${marker} — \\S`, 'm');
  const files = ['apps', 'libs', 'test'].flatMap((dir) => suiteFiles(join(ROOT, dir)));
  return files.filter((file) => line.test(readFileSync(file, 'utf8'))).map((file) => relative(ROOT, file)).sort();
}
