// The order test files start in (vitest.config.ts sequence.sequencer). With two workers the run ends when the
// last long file ends: a long file started late is the run's tail. vitest orders by the durations it cached on
// the last run, but a fresh clone (CI after `npm ci`) has none; this list, longest first, holds on every machine.
// Then the service's other files (vitest's order), then the other isolated ones (short), so that the shared runners
// of the service's files are not stopped and restarted between them more than needed.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The slowest files of a pass, longest first: a full embedded pass of a94d5f2 (per-file durations from vitest's
 * reporter, docs/testing.md "How the suite is made fast"), the scanner files and server.test.ts as this list's
 * change left them. A file over about 15 s belongs here: unlisted, it may start last and be the run's tail
 * (console-scans, 30 s then, started 28 s before the end).
 */
const LONG_FIRST = [
  // The site scanner's file: about 25 scanned visits in Chromium, one scan with the default 3 s dwell window.
  'test/scanner.test.ts',
  'test/e2e/console-screens.test.ts',
  // Hostile pages in Chromium: 10,000 storage keys per visit, a page that loops until its scan's budget.
  'test/scanner-hostile.test.ts',
  'test/webhooks-process.test.ts',
  'test/server.test.ts',
  'test/rate-limits.test.ts',
  'test/e2e/sdk.test.ts',
  'test/e2e/console.test.ts',
  'test/e2e/sdk-v2.test.ts',
  'test/e2e/sdk-v2-jurisdictions.test.ts',
  // The React Native package's nine journeys in Chromium (39-51 s alone on a loaded machine).
  'test/e2e/react-native.test.ts',
  'test/promises.test.ts',
  'test/admin-cli.test.ts',
  'test/ledger.test.ts',
  'test/fault-injection.test.ts',
  'test/e2e/console-scans.test.ts',
  'test/auth.test.ts',
  'test/e2e/sdk-v2-integrations.test.ts',
  'test/consent.test.ts',
  'test/e2e/console-walk.test.ts',
  'test/webhooks.test.ts',
  'test/scanner-report.test.ts',
];

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const index = LONG_FIRST.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
      if (index >= 0) return index;
      return spec.project.config.isolate ? LONG_FIRST.length + 1 : LONG_FIRST.length;
    };
    // Array.prototype.sort is stable: within a rank, vitest's order stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
