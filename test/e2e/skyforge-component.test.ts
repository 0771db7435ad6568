import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { checkDeploy, type StageReport } from "../../scripts/deploy/check-deploy.ts";
import { runCheckDeploy } from "../../scripts/deploy/check-deploy-command.ts";
import { linkedGrants, linkFailures } from "../../scripts/deploy/link-assertions.ts";
import { ensurePlatform, runStage, StageFailed } from "../../scripts/deploy/sst-program.ts";
import { copyProject, linkPlatform, type ProjectCopy, projectRoot } from "../support/project-copy.ts";

/**
 * The Skyforge SST component (infra/skyforge.ts) as a project uses it, on SST's real components
 * under Pulumi's mocks (scripts/deploy/): two components in one stage, a function linked to one, an
 * app module the component must refuse, and `skyforge check-deploy` in a project outside this
 * repository whose app imports this checkout's engine by absolute path.
 */

const ci = [{ stage: "ci", dev: false }] as const;

/** A small second app: one Lambda-tier queue and one kind, importing the engine by relative path. */
const MAIL_APP = `import * as z from "zod";
import { defineApp, defineQueues, kindBuilder } from "../lib/declarations/define-app.ts";

const queues = defineQueues([
  {
    name: "mail",
    batchSize: 5,
    batchWindowSeconds: 1,
    maxConcurrency: 2,
    recordConcurrency: 5,
    workerTimeoutSeconds: 60,
    leaseSeconds: 30,
    backoff: { baseSeconds: 2, maxSeconds: 600 },
    retentionDays: { done: 7, dead: 30 },
    maxReceiveCount: 40,
  },
]);
const defineKind = kindBuilder<{ queues: typeof queues; kinds: []; poolKinds: []; rateLimits: [] }>();
const sendMail = defineKind({
  name: "send-mail",
  payload: z.object({ to: z.string() }),
  queue: "mail",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ to }) => \`mail-app-sent:\${to}\`,
});
export default defineApp({ queues, kinds: [sendMail], poolKinds: [], schedules: [], rateLimits: [] });
`;

/** An sst.config.ts whose run() is `body` (the component imported from `component`). */
function sstConfig(body: string, component = "./infra/skyforge"): string {
  return `/// <reference path="./.sst/platform/config.d.ts" />
export default $config({
  app(input) {
    return { name: "skyforge", home: "aws", removal: "remove", protect: input?.stage === "production" };
  },
  async run() {
    const { Skyforge } = await import(${JSON.stringify(component)});
${body}
  },
});
`;
}

const write = (dir: string, file: string, text: string) => {
  mkdirSync(dirname(join(dir, file)), { recursive: true });
  writeFileSync(join(dir, file), text);
};

let copy: ProjectCopy;
beforeAll(() => {
  ensurePlatform(projectRoot);
  copy = copyProject("skyforge-component-", { deploy: true });
  write(copy.dir, "mail/app.ts", MAIL_APP);
  write(copy.dir, "web/index.ts", "export const handler = async () => ({ statusCode: 200 });\n");
}, 180_000);
afterAll(() => copy?.remove());

/** The program's error for an sst.config.ts whose run() is `body`, and what it had registered. */
async function refused(body: string): Promise<StageFailed> {
  write(copy.dir, "sst.config.ts", sstConfig(body));
  const error = await runStage(copy.dir, "ci", false).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StageFailed);
  return error as StageFailed;
}

describe("two components in one stage, and a function linked to one", () => {
  let report: StageReport;
  beforeAll(async () => {
    write(
      copy.dir,
      "sst.config.ts",
      sstConfig(`    const jobs = new Skyforge("Jobs", { app: "app/index.ts" });
    new Skyforge("Mail", { app: "mail/app.ts", transform: { function: { memory: "2048 MB" } } });
    new sst.aws.Function("Web", { handler: "web/index.handler", link: [jobs] });
    return jobs.outputs;`),
    );
    [report] = (await checkDeploy(copy.dir, ci)) as [StageReport];
  }, 180_000);

  test("each is as its own app declares, and no two resources share a name", () => {
    expect(report.failures).toEqual([]);
    expect(report.run.components.map((c) => c.name)).toEqual(["Jobs", "Mail"]);
    const names = report.run.resources.map((r) => `${r.type}::${r.name}`);
    expect(names.length).toBe(new Set(names).size);
    // Physical names, by AWS type: two of one type with one name would be one resource on AWS (an
    // API's stage is named within its API: each is "$default").
    const physical = report.run.resources
      .filter((r) => typeof r.inputs.name === "string" && r.type !== "aws:apigatewayv2/stage:Stage")
      .map((r) => `${r.type}::${String(r.inputs.name)}`);
    expect(physical.filter((n, i) => physical.indexOf(n) !== i)).toEqual([]);
    const mailQueues = report.run.resources
      .filter((r) => r.type === "aws:sqs/queue:Queue" && r.component === "Mail")
      .map((r) => r.name);
    expect(mailQueues.sort()).toEqual(["MailMailDlqQueue", "MailMailQueueQueue"]);
  });

  test("a component's `transform` reaches its own resources only", () => {
    const memory = (component: string) =>
      new Set(
        report.run.resources
          .filter((r) => r.type === "aws:lambda/function:Function" && r.component === component)
          .map((r) => r.inputs.memorySize),
      );
    expect(memory("Mail")).toEqual(new Set([2048]));
    expect(memory("Jobs")).not.toContain(2048);
  });

  test("each function's bundle holds its own component's app, not the other's", () => {
    const builds = report.run.builds;
    const mailWorker = builds.find((b) => b.handler === ".sst/skyforge/Mail/worker.handler");
    expect(mailWorker?.inputs).toContain(join(copy.dir, "mail/app.ts"));
    expect(mailWorker?.inputs.some((i) => i.includes("/app/kinds/"))).toBe(false);
    const jobsWorker = builds.find((b) => b.handler === ".sst/skyforge/Jobs/worker.handler");
    expect(jobsWorker?.inputs).toContain(join(copy.dir, "app/kinds/echo.ts"));
    expect(jobsWorker?.inputs).not.toContain(join(copy.dir, "mail/app.ts"));
  });

  test("`link: [jobs]` grants the producer's two statements, no `*` action, and nothing of Mail", () => {
    const grants = linkedGrants(report.run);
    expect(grants.map((g) => [g.function, g.component])).toEqual([["WebFunction", "Jobs"]]);
    const [grant] = grants;
    const api = report.run.resources.find((r) => r.name === "JobsApiApi")?.outputs.executionArn;
    const enqueue = report.run.resources.find((r) => r.name === "JobsEnqueueFunction")?.outputs.arn;
    expect(grant?.statements).toEqual([
      {
        Effect: "Allow",
        Action: ["execute-api:Invoke"],
        Resource: [`${api}/$default/POST/jobs`, `${api}/$default/POST/jobs/batch`],
      },
      { Effect: "Allow", Action: ["lambda:InvokeFunction"], Resource: [enqueue] },
    ]);
  });

  test("a linked role that reaches more of the component fails, naming the statement", () => {
    // The Web role as SST would render `link: [jobs, jobs.table]`: the table's link adds dynamodb:*.
    const run = structuredClone(report.run);
    const table = run.resources.find((r) => r.name === "JobsTableTable")?.outputs.arn;
    const role = run.resources.find((r) => r.name === "WebRole");
    const policies = role?.inputs.inlinePolicies as { policy: string }[];
    const policy = JSON.parse(policies[0]?.policy ?? "{}") as { Statement: unknown[] };
    policy.Statement.push({ Effect: "Allow", Action: ["dynamodb:*"], Resource: [table] });
    policies[0] = { ...policies[0], policy: JSON.stringify(policy) };
    expect(linkFailures(run)).toEqual([
      `function WebFunction (linked to Jobs): extra statement {"Effect":"Allow","Action":["dynamodb:*"],"Resource":["${table}"]}`,
      "function WebFunction (linked to Jobs): a wildcard action dynamodb:*",
    ]);
  });
});

describe("what the component refuses, before any resource is planned", () => {
  const planned = (error: StageFailed) => error.resources.filter((r) => r.type !== "pulumi:pulumi:Stack");

  test("a second component of the same name: refused by name", async () => {
    const error = await refused(`    new Skyforge("Jobs", { app: "app/index.ts" });
    new Skyforge("Jobs", { app: "mail/app.ts" });`);
    expect(error.programError).toMatch(
      /Skyforge "Jobs": a stage holds one Skyforge component of each name; "Jobs" is declared already/,
    );
  }, 120_000);

  test("no `app`, an app module without a defineApp value, or one that doesn't compile: one error naming it", async () => {
    const missing = await refused(`    new Skyforge("Jobs", {});`);
    expect(missing.programError).toMatch(/Skyforge "Jobs": no `app`: name the module that exports/);
    expect(planned(missing)).toEqual([]);

    write(copy.dir, "bad/plain.ts", "export const app = { queues: [] };\n");
    const plain = await refused(`    new Skyforge("Jobs", { app: "bad/plain.ts" });`);
    expect(plain.programError).toMatch(/bad\/plain\.ts exports no defineApp value/);
    expect(planned(plain)).toEqual([]);

    write(copy.dir, "bad/broken.ts", "export default defineApp({ queues: [ });\n");
    const broken = await refused(`    new Skyforge("Jobs", { app: "bad/broken.ts" });`);
    expect(broken.programError).toMatch(/bad\/broken\.ts does not compile:/);
    expect(planned(broken)).toEqual([]);
  }, 180_000);

  test("`skyforge check-deploy` prints the one error and exits 1", async () => {
    write(copy.dir, "sst.config.ts", sstConfig(`    new Skyforge("Jobs", { app: "bad/plain.ts" });`));
    const lines: string[] = [];
    const code = await runCheckDeploy(["--root", copy.dir, "--stage", "ci"], (l) => lines.push(l));
    expect(code).toBe(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^check-deploy: bad\/plain\.ts exports no defineApp value/);
  }, 120_000);
});

describe("skyforge check-deploy in a project outside this repository", () => {
  const dir = mkdtempSync(join(tmpdir(), "skyforge-outside-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("plans the project's component over its own app, and prints one line per resource", async () => {
    write(dir, "package.json", JSON.stringify({ name: "outside-app", private: true, type: "module" }));
    // The engine by absolute path (the installed package's path is the package's own test).
    write(
      dir,
      "src/jobs/app.ts",
      MAIL_APP.replace(
        "../lib/declarations/define-app.ts",
        join(projectRoot, "lib/declarations/define-app.ts"),
      ),
    );
    write(dir, "src/web.ts", "export const handler = async () => ({ statusCode: 200 });\n");
    write(
      dir,
      "sst.config.ts",
      sstConfig(
        `    const jobs = new Skyforge("Jobs", { app: "src/jobs/app.ts" });
    new sst.aws.Function("Web", { handler: "src/web.handler", link: [jobs] });
    return jobs.outputs;`,
        join(projectRoot, "infra/skyforge.ts"),
      ),
    );
    // zod and esbuild, as the project's own dependencies would be; SST's platform, as `sst install` writes it.
    symlinkSync(join(projectRoot, "node_modules"), join(dir, "node_modules"), "dir");
    linkPlatform(dir);

    const lines: string[] = [];
    const code = await runCheckDeploy(["--root", dir, "--stage", "ci"], (l) => lines.push(l));
    expect(lines.at(-1)).toBe("check-deploy: every stage is as declared");
    expect(code).toBe(0);
    expect(lines[0]).toMatch(
      /^ci: \d+ resources, 1 Skyforge component\(s\) \(Jobs\); built .*worker \d+ KiB/,
    );
    expect(lines).toEqual(
      expect.arrayContaining([
        "  [Jobs] aws:sqs/queue:Queue JobsMailQueueQueue",
        "  [Jobs] aws:sqs/queue:Queue JobsMailDlqQueue",
        "  [Jobs] aws:lambda/function:Function JobsEnqueueFunction",
        expect.stringMatching(
          /^ {2}link WebFunction -> Jobs: execute-api:Invoke on .*POST\/jobs.*; lambda:InvokeFunction on /,
        ),
      ]),
    );
    // One line per resource the program registered: the component's, the project's function, SST's own.
    expect(lines.filter((l) => /^ {2}(\[\w+\] )?[\w-]+:[\w/-]*:\w+ \S+$/.test(l)).length).toBe(
      Number(/^ci: (\d+) resources/.exec(lines[0] ?? "")?.[1]),
    );
    // No pool: the app declares no pool kind.
    expect(lines.some((l) => / aws:ecs\//.test(l))).toBe(false);
  }, 180_000);
});
