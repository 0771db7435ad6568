import { existsSync } from "node:fs";
import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The suite's longest files, longest first (measured: `vitest --reporter=json`, one run on the
 * 2-core machine). vitest orders files it has no timings for (a fresh clone, as CI is) by their size,
 * and a file of SST program runs or package builds is not a large file: check-deploy, then one
 * file of 3 minutes of work, started a quarter into the run and ended it. Started first, the long files run
 * beside the short ones instead of after them (longest-first is the classic rule for the shortest
 * end on a fixed number of workers).
 */
export const SLOW_FILES = [
  "test/e2e/library-project.test.ts",
  "test/e2e/infra-real.test.ts",
  "test/e2e/check-deploy-iam.test.ts",
  "test/e2e/client-package.test.ts",
  "test/e2e/check-deploy.test.ts",
  "test/e2e/check-deploy-exposure.test.ts",
  "test/e2e/cli-bulk.test.ts",
  "test/e2e/skyforge-package.test.ts",
  "test/e2e/skyforge-component.test.ts",
  "test/integration/heat-model.test.ts",
  "test/integration/bench-cli.test.ts",
  "test/e2e/cli.test.ts",
  "test/e2e/cli-replay.test.ts",
  "test/e2e/cli-durable.test.ts",
  "test/e2e/console.test.ts",
  "test/e2e/restart.test.ts",
  "test/e2e/lambda-bundles.test.ts",
  "test/integration/pool-process.test.ts",
  "test/integration/groups.test.ts",
  "test/integration/pool-batch.test.ts",
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
