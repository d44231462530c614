// A jest reporter (jest.config.mjs): after the run, one report per pass of test/passes.mjs that
// ran, reports/jest-<pass>.json, with jest's --json counts for that pass's projects alone and each
// suite's times; scripts/test-all.mjs prints one line per pass from them, scripts/test-summary.mjs
// sums them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PASSES, ROOT, passOfProject, selectedPasses } from '../passes.mjs';

export default class PassReporter {
  onRunComplete(_contexts, results) {
    const reports = Object.fromEntries(
      selectedPasses().map((pass) => [
        pass,
        { pass, title: PASSES[pass].title, numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTotalTestSuites: 0, numFailedTestSuites: 0, testResults: [] },
      ]),
    );
    for (const suite of results.testResults) {
      const project = suite.displayName?.name ?? '';
      const report = reports[passOfProject(project)];
      if (!report) continue;
      const failed = suite.numFailingTests > 0 || Boolean(suite.testExecError) || Boolean(suite.failureMessage);
      report.numPassedTests += suite.numPassingTests;
      // A suite that could not run (a syntax error, a failing beforeAll) counts as one failed test.
      report.numFailedTests += suite.numFailingTests || (failed ? 1 : 0);
      report.numPendingTests += suite.numPendingTests + suite.numTodoTests;
      report.numTotalTestSuites += 1;
      if (failed) report.numFailedTestSuites += 1;
      report.testResults.push({
        name: suite.testFilePath,
        project,
        status: failed ? 'failed' : 'passed',
        startTime: suite.perfStats.start,
        endTime: suite.perfStats.end,
      });
    }
    const dir = join(ROOT, 'reports');
    mkdirSync(dir, { recursive: true });
    for (const report of Object.values(reports)) writeFileSync(join(dir, PASSES[report.pass].report), `${JSON.stringify(report, null, 2)}\n`);
  }
}
