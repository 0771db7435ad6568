import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import { checkDeploy } from "../../scripts/deploy/check-deploy.ts";
import { runCheckDeploy } from "../../scripts/deploy/check-deploy-command.ts";
import { useCheckDeployCopy } from "../support/check-deploy-copy.ts";

/**
 * The offline deploy proof must fail when the infra is broken on purpose. Each case edits one infra
 * file in a copy of the project, runs SST's real components on it for one stage, and expects the
 * named failure; the untouched copy must pass first (test/e2e/check-deploy.test.ts), so a failure
 * can only come from the edit. The cases are split over three files, each with its own copy, so
 * they run beside each other: the whole project on every stage, a recorded journal fixture, the
 * workers' settings.
 */

const project = useCheckDeployCopy("skyforge-check-deploy-");

describe("check:deploy on SST's own components", () => {
  test("the project as it stands passes on every stage", async () => {
    const reports = await checkDeploy(project.dir);
    expect(reports.map((r) => [r.run.stage, r.failures])).toEqual([
      ["dev", []],
      ["ci", []],
      ["production", []],
    ]);
    // Every function was really bundled by the Runtime.Build stand-in outside dev: eight (the token
    // callback's and realtime's two included), and one worker per Lambda-tier queue, each from its
    // generated entry.
    const workers = app.queues.filter((q) => tierOf(q) === "lambda").length;
    expect(reports[1]?.run.builds.map((b) => b.handler).sort()).toHaveLength(8 + workers);
    for (const b of reports[1]?.run.builds ?? [])
      expect(b.handler).toMatch(/^\.sst\/skyforge\/Jobs\/[a-z-]+\.handler$/);
  }, 120_000);

  test("a recorded journal fixture whose kind moved a step: check-deploy warns, naming the kind, the fixture and the step, and still passes", async () => {
    // A fixture as `skyforge durable fixture` writes it, of an onboard job waiting for its token's approval.
    const fixture = {
      format: 1,
      kind: "onboard",
      version: "src-000000000000",
      jobId: "01JFIXTURE0000000000000000",
      status: "scheduled",
      recordedAt: "2026-12-02T06:00:00.000Z",
      payload: { user: "ada" },
      ops: [
        { name: "create-account", op: "step", place: 1, status: "done", result: { account: "acct-ada" } },
        { name: "cool-off", op: "sleep", place: 2, status: "done" },
        {
          name: "approval",
          op: "token",
          place: 3,
          status: "done",
          result: {
            id: "tok_01JFIXTURE000000000000000",
            url: "/tokens/tok_01JFIXTURE000000000000000?secret=removed",
          },
        },
      ],
    };
    const dir = join(project.dir, "durable-fixtures", "onboard");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "waiting-approval.json"), JSON.stringify(fixture));
    const lines: string[] = [];
    try {
      project.edit(
        "app/kinds/onboard.ts",
        'const token = await ctx.createToken("approval", { timeoutSeconds: 600 });',
        'await ctx.step("send-welcome", async () => ({ sentAt: "early" }));\n    const token = await ctx.createToken("approval", { timeoutSeconds: 600 });',
      );
      const code = await runCheckDeploy(["--root", project.dir, "--stage", "ci"], (line) => lines.push(line));
      expect(code, lines.join("\n")).toBe(0);
    } finally {
      project.restore();
      rmSync(join(project.dir, "durable-fixtures"), { recursive: true, force: true });
    }
    expect(lines).toContain("durable fixtures: 1 replayed, 1 warning(s)");
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}WARNING durable-fixtures\/onboard\/waiting-approval\.json: kind onboard: step "send-welcome" is new at place 3 of the handler's calls, where the journal has "approval"; version "src-000000000000" -> "src-\w+", onVersionChange "continue": .*NonDeterminismError/,
      ),
    );
    expect(lines.at(-1)).toBe("check-deploy: every stage is as declared");
  }, 120_000);

  test("dropping partial batch responses fails", async () => {
    const failures = await project.failuresAfter(
      "infra/workers.ts",
      "partialResponses: true",
      "partialResponses: false",
    );
    expect(failures).toContainEqual(expect.stringMatching(/lacks ReportBatchItemFailures/));
  }, 60_000);

  test("a visibility that covers the worker's timeout but not its batching window and init fails", async () => {
    const failures = await project.failuresAfter(
      "infra/queues.ts",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: infra/queues.ts's source text, matched literally.
      "visibilityTimeout: `${visibilityTimeoutSeconds(q)} seconds`",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the replacement source text.
      "visibilityTimeout: `${q.workerTimeoutSeconds} seconds`",
    );
    expect(failures).toContainEqual(
      expect.stringMatching(
        /visibility \d+ s is under the worker's \d+ s timeout \+ its \d+ s batching window \+ 10 s of init/,
      ),
    );
  }, 60_000);
});
