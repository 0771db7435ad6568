import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { tierOf } from "../../lib/app/queue-declaration.ts";
import { checkDeploy } from "../../scripts/deploy/check-deploy.ts";
import { ensurePlatform } from "../../scripts/deploy/sst-program.ts";
import { copyProject, type ProjectCopy, projectRoot } from "../support/project-copy.ts";

/**
 * The offline deploy proof must fail when the infra is broken on purpose. Each case edits one infra
 * file in a copy of the project, runs SST's real components on it for one stage, and expects the
 * named failure; the untouched copy must pass first, so a failure can only come from the edit.
 */

const ciStage = [{ stage: "ci", dev: false }] as const;
let copy: ProjectCopy;
const originals = new Map<string, string>();

function edit(file: string, from: string, to: string) {
  const path = join(copy.dir, file);
  const source = readFileSync(path, "utf8");
  if (!source.includes(from)) throw new Error(`${file} no longer contains ${from}`);
  originals.set(path, source);
  writeFileSync(path, source.replace(from, to));
}

async function failuresAfter(file: string, from: string, to: string): Promise<string[]> {
  edit(file, from, to);
  try {
    const [report] = await checkDeploy(copy.dir, ciStage);
    return report?.failures ?? [];
  } finally {
    for (const [path, source] of originals) writeFileSync(path, source);
    originals.clear();
  }
}

beforeAll(() => {
  ensurePlatform(projectRoot);
  copy = copyProject("skyforge-check-deploy-", { deploy: true });
}, 180_000);
afterAll(() => copy?.remove());

describe("check:deploy on SST's own components", () => {
  test("the project as it stands passes on every stage", async () => {
    const reports = await checkDeploy(copy.dir);
    expect(reports.map((r) => [r.run.stage, r.failures])).toEqual([
      ["dev", []],
      ["ci", []],
      ["production", []],
    ]);
    // Every function was really bundled by the Runtime.Build stand-in outside dev: five, and one
    // worker per Lambda-tier queue.
    const workers = app.queues.filter((q) => tierOf(q) === "lambda").length;
    expect(reports[1]?.run.builds.map((b) => b.handler).sort()).toHaveLength(5 + workers);
  }, 120_000);

  test("dropping partial batch responses fails", async () => {
    const failures = await failuresAfter(
      "infra/workers.ts",
      "partialResponses: true",
      "partialResponses: false",
    );
    expect(failures).toContainEqual(expect.stringMatching(/lacks ReportBatchItemFailures/));
  }, 60_000);

  test("adding a link fails: it grants more than the plan", async () => {
    const failures = await failuresAfter(
      "infra/workers.ts",
      'handler: "functions/worker.handler",',
      'handler: "functions/worker.handler",\n        link: [queue],',
    );
    expect(failures).toContainEqual(expect.stringMatching(/role .*\(worker\): extra statement .*sqs:\*/));
  }, 60_000);

  test("widening a grant fails", async () => {
    const failures = await failuresAfter(
      "infra/permissions.ts",
      'case "table":\n      return table.arn;',
      'case "table":\n      return "*";',
    );
    expect(failures).toContainEqual(expect.stringMatching(/wildcard resource \*$/));
  }, 60_000);

  test("a visibility below 6 × the worker's timeout fails", async () => {
    const failures = await failuresAfter(
      "infra/queues.ts",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: infra/queues.ts's source text, matched literally.
      "visibilityTimeout: `${visibilityTimeoutSeconds(q)} seconds`",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the replacement source text.
      "visibilityTimeout: `${q.workerTimeoutSeconds} seconds`",
    );
    expect(failures).toContainEqual(
      expect.stringMatching(/visibility \d+ s is under 6 × the worker's \d+ s timeout/),
    );
  }, 60_000);
});
