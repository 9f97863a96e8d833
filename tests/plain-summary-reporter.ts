import type { Reporter, TestModule } from 'vitest/node';

/**
 * Adds the plain closing line 'tests: N passed, N failed, N skipped' after vitest's own summary,
 * so any CI that reads closing lines counts the run the same way; before it, every test skipped
 * with a reason (`context.skip(reason)`: what this machine lacks) with that reason.
 */
export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const reasons: string[] = [];
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else {
          skipped++;
          const result = test.result();
          if (result.state === 'skipped' && result.note) reasons.push(`skipped: ${test.fullName}: ${result.note}`);
        }
      }
      if (testModule.state() === 'failed' && [...testModule.children.allTests()].length === 0) failed++;
    }
    if (reasons.length > 0) process.stdout.write(`\n${reasons.join('\n')}\n`);
    process.stdout.write(`\ntests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}
