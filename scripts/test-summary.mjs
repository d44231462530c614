// Sums the jest reports of one `npm test` (SQLite, helm 3, PostgreSQL) into one closing line.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The counts of one jest --json report, or null when the file is missing or unreadable. */
export function readReport(file) {
  if (!existsSync(file)) return null;
  try {
    const report = JSON.parse(readFileSync(file, 'utf8'));
    return { passed: report.numPassedTests, failed: report.numFailedTests, skipped: report.numPendingTests, suitesFailed: report.numFailedTestSuites };
  } catch {
    return null;
  }
}

function main() {
  const dir = 'reports';
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const file of existsSync(dir) ? readdirSync(dir).filter((f) => /^jest-.*\.json$/.test(f)).sort() : []) {
    const report = readReport(join(dir, file));
    if (!report) {
      console.log(`${file}: unreadable`);
      failed += 1;
      continue;
    }
    passed += report.passed;
    failed += report.failed;
    skipped += report.skipped;
    console.log(`${file}: ${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`);
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
