import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import { checkDeploy } from "../../scripts/deploy/check-deploy.ts";
import { runCheckDeploy } from "../../scripts/deploy/check-deploy-command.ts";
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
  // A second edit of one file keeps the first's original, so the copy is restored whole.
  if (!originals.has(path)) originals.set(path, source);
  writeFileSync(path, source.replace(from, to));
}

async function failuresAfter(file: string, from: string, to: string): Promise<string[]> {
  return failuresAfterEdits([[file, from, to]]);
}

async function failuresAfterEdits(
  edits: readonly [file: string, from: string, to: string][],
): Promise<string[]> {
  for (const [file, from, to] of edits) edit(file, from, to);
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
    // Every function was really bundled by the Runtime.Build stand-in outside dev: six (the token
    // callback's included), and one worker per Lambda-tier queue, each from its generated entry.
    const workers = app.queues.filter((q) => tierOf(q) === "lambda").length;
    expect(reports[1]?.run.builds.map((b) => b.handler).sort()).toHaveLength(6 + workers);
    for (const b of reports[1]?.run.builds ?? [])
      expect(b.handler).toMatch(/^\.sst\/skyforge\/Jobs\/[a-z-]+\.handler$/);
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
      "handler: build.handlers.worker,",
      "handler: build.handlers.worker,\n          link: [queue],",
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

  test("a role that trusts more than its service fails", async () => {
    // Without the override, SST's `sst dev` policy comes back: the whole account may assume the roles.
    const defaults = await failuresAfter(
      "infra/role-trust.ts",
      "args.assumeRolePolicy = serviceTrust(service);",
      "",
    );
    expect(defaults).toContainEqual(
      expect.stringMatching(/role JobsReaperHandlerRole \(lambda\): trusts .*arn:aws:iam::123456789012:root/),
    );
    const widened = await failuresAfter(
      "infra/role-trust.ts",
      "Principal: { Service: service },",
      'Principal: { Service: service, AWS: "*" },',
    );
    for (const kind of ["lambda", "pool task", "pool execution", "schedule"]) {
      expect(widened).toContainEqual(
        expect.stringMatching(new RegExp(`\\(${kind}\\): trusts .*"AWS":\\["\\*"\\]`)),
      );
    }
  }, 90_000);

  test("a managed policy more fails", async () => {
    const failures = await failuresAfter(
      "infra/schedules.ts",
      "handler: build.handlers.reaper,",
      'handler: build.handlers.reaper,\n    policies: ["arn:aws:iam::aws:policy/AdministratorAccess"],',
    );
    expect(failures).toContainEqual(
      expect.stringMatching(/role JobsReaperHandlerRole \(lambda\): managed policies .*AdministratorAccess/),
    );
  }, 60_000);

  test("CORS, ECS Exec or an access log without the caller fails", async () => {
    const failures = await failuresAfterEdits([
      ["infra/api-gateway.ts", "args.corsConfiguration = undefined;", ""],
      ["infra/storage.ts", "cors: false,", ""],
      ["infra/pool.ts", "args.enableExecuteCommand = false;", ""],
      ["infra/api-access-log.ts", 'callerArn: "$context.identity.userArn",', ""],
    ]);
    expect(failures).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^Jobs: API JobsApiApi has a CORS configuration/),
        expect.stringMatching(/^Jobs: bucket .* has a CORS configuration \(JobsClaimsCors\)/),
        expect.stringMatching(/^Jobs: ECS service JobsPoolService allows ECS Exec/),
        expect.stringMatching(
          /^Jobs: API stage JobsApiStage: the access log does not record the caller's ARN/,
        ),
      ]),
    );
  }, 60_000);

  test("a pool task left with Docker's default capabilities and user fails", async () => {
    const failures = await failuresAfter(
      "infra/pool.ts",
      "args.containerDefinitions = $output(args.containerDefinitions).apply(withPoolPrivileges);",
      "void withPoolPrivileges;",
    );
    expect(failures).toContainEqual(
      expect.stringMatching(
        /the pool container keeps capabilities it doesn't need: AUDIT_WRITE, DAC_OVERRIDE/,
      ),
    );
    expect(failures).toContainEqual(expect.stringMatching(/the pool container runs as user undefined/));
  }, 60_000);

  test("another route left without IAM auth, or served by the token callback's function, fails", async () => {
    const failures = await failuresAfter(
      "infra/api.ts",
      "  UNAUTHENTICATED_ROUTE_KEYS.includes(route)\n",
      '  UNAUTHENTICATED_ROUTE_KEYS.includes(route) || route === "GET /keys"\n',
    );
    expect(failures).toEqual(
      expect.arrayContaining([
        "Jobs: route GET /keys is NONE, not AWS_IAM",
        expect.stringMatching(
          /^Jobs: route GET \/keys is served by JobsCallback\w*, not \.sst\/skyforge\/Jobs\/api\.handler$/,
        ),
      ]),
    );
    // The callback itself behind IAM (and in the API function) fails too: a token's url would stop working.
    const closed = await failuresAfter(
      "infra/api.ts",
      "  UNAUTHENTICATED_ROUTE_KEYS.includes(route)\n",
      "  UNAUTHENTICATED_ROUTE_KEYS.includes(route.toLowerCase())\n",
    );
    expect(closed).toEqual(
      expect.arrayContaining([
        "Jobs: route POST /tokens/{id} is AWS_IAM, not NONE",
        expect.stringMatching(
          /^Jobs: route POST \/tokens\/\{id\} is served by JobsApiHandler\w*, not \.sst\/skyforge\/Jobs\/token-callback\.handler$/,
        ),
      ]),
    );
  }, 90_000);

  test("the token callback's function granted more than its narrow list fails", async () => {
    const wider = await failuresAfter(
      "infra/api.ts",
      'permissions: permissionsFor(build, targets, "token-callback"),',
      'permissions: permissionsFor(build, targets, "enqueue"),',
    );
    expect(wider).toContainEqual(
      expect.stringMatching(/role JobsCallback\w* \(token-callback\): extra statement .*dynamodb:PutItem/),
    );
    // Without its conditions, its table grants would reach every item and every attribute of it, not
    // only what a token's completion and its job's resume write.
    const anyKey = await failuresAfter(
      "infra/permissions.ts",
      "...(g.conditions",
      "...(false && g.conditions",
    );
    expect(anyKey).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): extra statement \{"Effect":"Allow","Action":\["dynamodb:UpdateItem"\],"Resource":\["[^"]+"\]\}$/,
        ),
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): missing statement .*"dynamodb:Attributes":\["gsi1pk","gsi1sk","pk","promotingUntil","runAt","sk","waiting"\].*"dynamodb:LeadingKeys":\["job#\*"\].*"dynamodb:ReturnValues":\["NONE"\]/,
        ),
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): missing statement .*"dynamodb:Attributes":\["completedAt","o","pk","secretHash","sk","status","timeoutAt","v"\].*"dynamodb:LeadingKeys":\["tok#\*"\]/,
        ),
      ]),
    );
    // Its objects widened to the whole claims prefix: it could overwrite any job's payload or result.
    const anyObject = await failuresAfter(
      "infra/permissions.ts",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: infra/permissions.ts's source text, matched literally.
      "return $interpolate`${claims.arn}/${TOKEN_OBJECTS_PATTERN}`;",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the replacement source text.
      "return $interpolate`${claims.arn}/${CLAIMS_PREFIX}*`;",
    );
    expect(anyObject).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): extra statement .*s3:PutObject.*\/claims\/\*"\]\}$/,
        ),
        expect.stringMatching(
          /role JobsCallback\w* \(token-callback\): missing statement .*s3:PutObject.*\/claims\/\*\/token-\*"\]\}$/,
        ),
      ]),
    );
  }, 120_000);

  test("an API stage without its throttles, made before its routes, or a token callback without reserved concurrency fails", async () => {
    const failures = await failuresAfterEdits([
      ["infra/api-gateway.ts", "args.defaultRouteSettings = {", "void {"],
      ["infra/api-gateway.ts", "opts.dependsOn = declaredRoutes;", "void declaredRoutes;"],
      ["infra/api.ts", "concurrency: { reserved: build.throttle.tokenCallback.reservedConcurrency },", ""],
    ]);
    expect(failures).toEqual(
      expect.arrayContaining([
        "Jobs: API stage JobsApiStage throttles its routes at none, not rate 1000 / burst 2000",
        expect.stringMatching(
          /^Jobs: API stage JobsApiStage is created before 29 of its routes \(DELETE \/schedules\/\{name\}, GET \/groups\/\{id\}, GET \/groups\/\{id\}\/children, …\): API Gateway refuses a route's settings before the route exists$/,
        ),
        "Jobs: function JobsCallbackFunction reserves no concurrency, not 50 (the token callback's)",
      ]),
    );
    // The callback's route left to the stage's default (its own settings gone) fails too.
    const shared = await failuresAfter(
      "infra/api-gateway.ts",
      "routeKey: TOKEN_CALLBACK_ROUTE,",
      'routeKey: "POST /events",',
    );
    expect(shared).toEqual(
      expect.arrayContaining([
        "Jobs: API stage JobsApiStage throttles POST /tokens/{id} at the stage's default, not rate 20 / burst 30",
        "Jobs: API stage JobsApiStage has settings of its own for POST /events",
      ]),
    );
  }, 90_000);

  test("a visibility that covers the worker's timeout but not its batching window and init fails", async () => {
    const failures = await failuresAfter(
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
    const dir = join(copy.dir, "durable-fixtures", "onboard");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "waiting-approval.json"), JSON.stringify(fixture));
    const lines: string[] = [];
    try {
      edit(
        "app/kinds/onboard.ts",
        'const token = await ctx.createToken("approval", { timeoutSeconds: 600 });',
        'await ctx.step("send-welcome", async () => ({ sentAt: "early" }));\n    const token = await ctx.createToken("approval", { timeoutSeconds: 600 });',
      );
      const code = await runCheckDeploy(["--root", copy.dir, "--stage", "ci"], (line) => lines.push(line));
      expect(code, lines.join("\n")).toBe(0);
    } finally {
      for (const [path, source] of originals) writeFileSync(path, source);
      originals.clear();
      rmSync(join(copy.dir, "durable-fixtures"), { recursive: true, force: true });
    }
    expect(lines).toContain("durable fixtures: 1 replayed, 1 warning(s)");
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^ {2}WARNING durable-fixtures\/onboard\/waiting-approval\.json: kind onboard: step "send-welcome" is new at place 3 of the handler's calls, where the journal has "approval"; version "src-000000000000" -> "src-\w+", onVersionChange "continue": .*NonDeterminismError/,
      ),
    );
    expect(lines.at(-1)).toBe("check-deploy: every stage is as declared");
  }, 120_000);
});
