import { existsSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The suite's longest files, longest first (measured: per-file durations of one fresh-clone `.ci/run`
 * on the 2-core machine; every file of 17 s or more). vitest orders files it has no timings for (a
 * fresh clone, as CI is) by their size, and a file of SST program runs or package builds is not a
 * large file: check-deploy-realtime, two minutes of SST program runs and missing from this list,
 * started 344 s into a run (the list's other check-deploy files had started in the first 100 s).
 * Started first, the long files run beside the short ones instead of after them (longest-first is
 * the classic rule for the shortest end on a fixed number of workers).
 *
 * store-search (45 s in the fresh-clone run at 6de28ae) was missing: started last, it ran alone at
 * the end of the shared phase for most of a minute. cli-bulk stays 8th: started third, beside the
 * SST program runs, its 10 000 jobs took 247 s instead of 141 (that run also used about 170 CPU-s
 * more, but alone beside two busy loops cli-bulk used less CPU, not more, so the extra is not
 * shown to be its).
 *
 * The fault suite (run last, two files at a time: vitest.config.ts) is left in vitest's order.
 * Longest first put its two longest files, flow-keys and fault-injection, beside each other for
 * their whole length (in a fresh clone's order, by file size, they never met), and in the one run
 * so ordered, on a machine loaded by other work, a bound of flow-keys' (a place unused no more than
 * 8 s after a stack kill) failed at 11.6 s: for a tail a few seconds shorter, not worth the doubt.
 */
export const SLOW_FILES = [
  "test/e2e/library-project.test.ts",
  "test/e2e/check-deploy-realtime.test.ts",
  "test/e2e/browser.test.ts",
  "test/e2e/check-deploy.test.ts",
  "test/e2e/infra-real.test.ts",
  "test/e2e/client-package.test.ts",
  "test/e2e/check-deploy-exposure.test.ts",
  "test/e2e/cli-bulk.test.ts",
  "test/integration/bench-cli.test.ts",
  "test/e2e/check-deploy-iam.test.ts",
  "test/e2e/skyforge-component.test.ts",
  "test/e2e/cli-durable.test.ts",
  "test/integration/heat-model.test.ts",
  "test/integration/store-search.test.ts",
  "test/e2e/skyforge-package.test.ts",
  "test/e2e/cli-replay.test.ts",
  "test/e2e/cli.test.ts",
  "test/integration/pool-process.test.ts",
  "test/e2e/restart.test.ts",
  "test/integration/cold-start-json.test.ts",
  "test/integration/pool-batch.test.ts",
  "test/integration/pool-runner.test.ts",
  "test/integration/flow-keys.test.ts",
  "test/e2e/bad-pool-config.test.ts",
  "test/integration/batch-kinds.test.ts",
  "test/e2e/schedule-validation.test.ts",
  "test/integration/flow-limits.test.ts",
  "test/integration/stored-formats.test.ts",
  "test/integration/worker-crash.test.ts",
  "test/e2e/doctor.test.ts",
  "test/e2e/cli-foreign-answers.test.ts",
  "test/integration/pool-crash.test.ts",
  "test/e2e/doc-examples.test.ts",
  "test/integration/flow-control.test.ts",
] as const;

export class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const rank = (spec: TestSpecification) => {
      const at = SLOW_FILES.indexOf(relative(root, spec.moduleId) as (typeof SLOW_FILES)[number]);
      return at === -1 ? SLOW_FILES.length : at;
    };
    // A stable sort: the phases (sequence.groupOrder) stay in order, the rest keeps vitest's order.
    return sorted
      .map((spec, at) => ({ spec, at }))
      .sort(
        (a, b) =>
          a.spec.project.config.sequence.groupOrder - b.spec.project.config.sequence.groupOrder ||
          rank(a.spec) - rank(b.spec) ||
          a.at - b.at,
      )
      .map(({ spec }) => spec);
  }
}

/** The list names files that exist (a renamed file would silently lose its place). */
export function missingSlowFiles(root: string): string[] {
  return SLOW_FILES.filter((file) => !existsSync(`${root}/${file}`));
}
