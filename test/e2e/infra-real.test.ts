import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { checkDeploy as CheckDeploy } from "../../scripts/deploy/check-deploy.ts";
import { stageFailures } from "../../scripts/deploy/deploy-assertions.ts";
import type { RecordedResource } from "../../scripts/deploy/pulumi-mocks.ts";
import { ensurePlatform, runStage, StageFailed, type StageRun } from "../../scripts/deploy/sst-program.ts";
import { copyProject, type ProjectCopy, projectRoot } from "../support/project-copy.ts";

/**
 * Infra scenarios on SST's real components (scripts/deploy/sst-program.ts), for what the per-stage
 * assertions of `npm run check:deploy` can't express: the component's options, the command `sst dev`
 * runs for the pool, and edits to the app. What every deploy must have is checked there
 * (scripts/deploy/*-assertions.ts), on every stage.
 */

/** The repository's own component, as sst.config.ts declares it. */
const COMPONENT = 'new Skyforge("Jobs", { app: "app/index.ts" })';

interface SstConfig {
  app(input: { stage: string }): Record<string, unknown>;
}

let copy: ProjectCopy;

const ofType = (run: StageRun, type: string) => run.resources.filter((r) => r.type === type);
const appAlarms = (run: StageRun) =>
  ofType(run, "aws:cloudwatch/metricAlarm:MetricAlarm").filter((a) => !a.name.startsWith("JobsPool"));

beforeAll(() => {
  ensurePlatform(projectRoot);
  copy = copyProject("skyforge-infra-real-", { deploy: true });
}, 180_000);
afterAll(() => copy?.remove());

/** Runs the copy's ci stage with the component declared with `options` (JS source), then restores sst.config.ts. */
async function withOptions(options: string): Promise<StageRun> {
  const path = join(copy.dir, "sst.config.ts");
  const config = readFileSync(path, "utf8");
  if (!config.includes(COMPONENT)) throw new Error(`sst.config.ts no longer declares ${COMPONENT}`);
  writeFileSync(path, config.replace(COMPONENT, `new Skyforge("Jobs", { app: "app/index.ts", ${options} })`));
  try {
    return await runStage(copy.dir, "ci", false);
  } finally {
    writeFileSync(path, config);
  }
}

describe("alarm notifications, chosen by the component's `alarms`", () => {
  let runs: Record<"none" | "email" | "topic", StageRun>;
  const existingTopic = "arn:aws:sns:us-east-1:123456789012:ops-pager";
  beforeAll(async () => {
    runs = {
      // The deploy-time variables the option replaced change nothing any more.
      none: await runStage(copy.dir, "ci", false, {
        env: { SKYFORGE_ALARM_EMAIL: "ops@example.com", SKYFORGE_ALARM_TOPIC_ARN: existingTopic },
      }),
      email: await withOptions('alarms: { email: "ops@example.com" }'),
      topic: await withOptions(`alarms: { topic: ${JSON.stringify(existingTopic)} }`),
    };
  }, 120_000);

  test("with neither setting, alarms only change state: no topic, no actions", () => {
    expect(ofType(runs.none, "aws:sns/topic:Topic")).toEqual([]);
    expect(appAlarms(runs.none).length).toBeGreaterThan(0);
    for (const a of appAlarms(runs.none)) {
      expect([a.name, a.inputs.alarmActions, a.inputs.okActions]).toEqual([a.name, [], []]);
    }
  });

  test("`alarms.email` adds a topic with that address subscribed, and every alarm notifies it", () => {
    const topics = ofType(runs.email, "aws:sns/topic:Topic");
    expect(topics.map((t) => t.name)).toEqual(["JobsAlarmTopic"]);
    const topicArn = topics[0]?.outputs.arn;
    expect(ofType(runs.email, "aws:sns/topicSubscription:TopicSubscription").map((s) => s.inputs)).toEqual([
      expect.objectContaining({ topic: topicArn, protocol: "email", endpoint: "ops@example.com" }),
    ]);
    for (const a of appAlarms(runs.email)) {
      expect([a.name, a.inputs.alarmActions, a.inputs.okActions]).toEqual([a.name, [topicArn], [topicArn]]);
    }
    expect(stageFailures(runs.email)).toEqual([]);
  });

  test("`alarms.topic` makes every alarm notify that topic, and creates none", () => {
    expect(ofType(runs.topic, "aws:sns/topic:Topic")).toEqual([]);
    for (const a of appAlarms(runs.topic)) {
      expect([a.name, a.inputs.alarmActions]).toEqual([a.name, [existingTopic]]);
    }
    expect(stageFailures(runs.topic)).toEqual([]);
  });
});

describe("the API's throttles, chosen by the component's `throttle`", () => {
  test("each option reaches the stage's throttles or the callback's reserved concurrency, and the stage passes", async () => {
    const run = await withOptions(
      "throttle: { routes: { rate: 300, burst: 600 }, tokenCallback: { rate: 5, burst: 10, reservedConcurrency: 15 } }",
    );
    const [stage] = ofType(run, "aws:apigatewayv2/stage:Stage");
    expect(stage?.inputs).toMatchObject({
      defaultRouteSettings: { throttlingRateLimit: 300, throttlingBurstLimit: 600 },
      routeSettings: [{ routeKey: "POST /tokens/{id}", throttlingRateLimit: 5, throttlingBurstLimit: 10 }],
    });
    const reserved = run.resources
      .filter((r) => r.type === "aws:lambda/function:Function")
      .map((f) => [f.name, f.inputs.reservedConcurrentExecutions])
      .filter(([, n]) => n !== undefined);
    expect(reserved).toEqual([["JobsCallbackFunction", 15]]);
    expect(stageFailures(run)).toEqual([]);
  }, 60_000);

  test("a malformed option, or a concurrency the throttle could outrun, stops the deploy before anything is declared", async () => {
    for (const [options, message] of [
      [
        'throttle: { tokenCallback: { rate: "20/s" } }',
        /throttle\.tokenCallback\.rate must be a whole number/,
      ],
      [
        "throttle: { tokenCallback: { reservedConcurrency: 10 } }",
        /throttle\.tokenCallback\.reservedConcurrency must be at least/,
      ],
    ] as const) {
      const error = await withOptions(options).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(StageFailed);
      expect((error as StageFailed).message).toMatch(message);
      expect((error as StageFailed).constructed).toEqual([]);
    }
  }, 60_000);
});

describe("the pool under sst dev", () => {
  let run: StageRun;
  beforeAll(async () => {
    run = await runStage(copy.dir, "dev", true);
  }, 60_000);

  test("runs as a local command with the task's environment, and nothing is deployed for it or scales", () => {
    const service = run.constructed.find((c) => c.type === "sst:aws:Service" && c.name === "JobsPool");
    expect(service?.props).toMatchObject({
      dev: { command: "node --import tsx .sst/skyforge/Jobs/pool.ts" },
      environment: expect.objectContaining({ SKYFORGE_POOL_DRAIN_SECONDS: "25" }),
    });
    expect(run.constructed.map((c) => c.type)).toContain("sst:sst:DevCommand");
    const deployed = (r: RecordedResource) =>
      /^aws:(ecs\/(service|taskDefinition)|appautoscaling)\//.test(r.type);
    expect(run.resources.filter(deployed)).toEqual([]);
  });
});

describe("pool kinds from the component's `pool.config`", () => {
  test("the file's kinds reach the pool and the functions that enqueue, which carry the file", async () => {
    const file = "children/extra-pool.json";
    writeFileSync(
      join(copy.dir, file),
      JSON.stringify({ kinds: { "rb-size": { argv: ["ruby", "children/size.rb"], soft: 1, hard: 2 } } }),
    );
    const run = await withOptions(`pool: { config: ${JSON.stringify(file)}, maxTasks: 3 }`);
    expect(run.components[0]?.poolKinds.map((k) => k.name)).toContain("rb-size");
    expect(stageFailures(run)).toEqual([]);
    // The enqueue, API, callback and cron functions read it (each bundle gets a copy); the workers don't enqueue pool kinds' runs.
    const carrying = ofType(run, "aws:lambda/function:Function")
      .filter(
        (f) =>
          (f.inputs.environment as { variables: Record<string, string> }).variables.SKYFORGE_POOL_CONFIG ===
          file,
      )
      .map((f) => f.name)
      .sort();
    expect(carrying).toEqual([
      "JobsApiHandlerFunction",
      "JobsCallbackFunction",
      "JobsCronHandlerFunction",
      "JobsEnqueueFunction",
    ]);
    for (const name of ["JobsEnqueue", "JobsApiHandler", "JobsCallback"]) {
      const fn = run.constructed.find((c) => c.type === "sst:aws:Function" && c.name === name);
      expect(fn?.props.copyFiles, name).toEqual([{ from: file }]);
    }
    const target = ofType(run, "aws:appautoscaling/target:Target")[0];
    expect(target?.inputs.maxCapacity).toBe(3);
  }, 60_000);

  test("a file outside children/, or one the validator refuses, stops the program with one error naming it", async () => {
    const outside = await withOptions('pool: { config: "pool.json" }').then(
      () => undefined,
      (e: unknown) => e as StageFailed,
    );
    expect(outside?.programError).toMatch(
      /^Skyforge "Jobs": .*pool\.config must name a \.json file under children\//,
    );
    writeFileSync(
      join(copy.dir, "children/bad-pool.json"),
      JSON.stringify({ kinds: { "py-digest": { queue: "default" } } }),
    );
    const refused = await withOptions('pool: { config: "children/bad-pool.json" }').then(
      () => undefined,
      (e: unknown) => e as StageFailed,
    );
    expect(refused?.programError).toMatch(
      /^Skyforge "Jobs": app\/index\.ts with pool\.config children\/bad-pool\.json: children\/bad-pool\.json: 1 problem\(s\): py-digest: queue "default" is served by Lambda, not the pool/,
    );
    expect(refused?.constructed).toEqual([]);
  }, 60_000);
});

describe("stages", () => {
  // SST applies `removal` as a resource option, which the mocks never see; sst-program.ts evaluates
  // app() the same way, with SST's $config (an identity) in place.
  test("production keeps its resources on removal and is protected; any other stage is disposable", async () => {
    (globalThis as { $config?: (c: unknown) => unknown }).$config ??= (c) => c;
    const entry = pathToFileURL(join(projectRoot, "sst.config.ts")).href;
    const config = ((await import(/* @vite-ignore */ entry)) as { default: SstConfig }).default;
    for (const stage of ["prod", "production"]) {
      expect(config.app({ stage })).toMatchObject({ removal: "retain", protect: true });
    }
    expect(config.app({ stage: "alice" })).toMatchObject({ removal: "remove", protect: false });
  });
});

describe("editing the app in a copy of the project", () => {
  const queuesFile = () => join(copy.dir, "app/queues.ts");
  let original: string;
  beforeAll(() => {
    original = readFileSync(queuesFile(), "utf8");
  });

  /** Puts `source` in app/queues.ts for `body`, then restores the copy's file. */
  async function withQueues<T>(source: string, body: () => Promise<T>): Promise<T> {
    writeFileSync(queuesFile(), source);
    try {
      return await body();
    } finally {
      writeFileSync(queuesFile(), original);
    }
  }

  test("a queue declaration in app/queues.ts adds its queue, DLQ, worker, alarms and dashboard row, with no other edit", async () => {
    const at = original.lastIndexOf("]);");
    const emails = `  {
    name: "emails",
    batchSize: 5,
    batchWindowSeconds: 2,
    maxConcurrency: 3,
    recordConcurrency: 10,
    workerTimeoutSeconds: 60,
    leaseSeconds: 30,
    backoff: { baseSeconds: 2, maxSeconds: 600 },
    retentionDays: { done: 7, dead: 30 },
    maxReceiveCount: 40,
  },
`;
    const report = await withQueues(`${original.slice(0, at)}${emails}${original.slice(at)}`, async () => {
      // The copy's own checks: they read the copy's app/, so they expect the new queue everywhere.
      const entry = pathToFileURL(join(copy.dir, "scripts/deploy/check-deploy.ts")).href;
      const { checkDeploy } = (await import(/* @vite-ignore */ entry)) as { checkDeploy: typeof CheckDeploy };
      const [ci] = await checkDeploy(copy.dir, [{ stage: "ci", dev: false }]);
      return ci;
    });
    expect(report?.failures).toEqual([]);
    const run = report?.run as StageRun;
    const names = run.resources.map((r) => r.name);
    expect(names).toEqual(expect.arrayContaining(["JobsEmailsQueueQueue", "JobsEmailsDlqQueue"]));
    const worker = ofType(run, "aws:lambda/function:Function").find(
      (f) =>
        (f.inputs.environment as { variables: Record<string, string> }).variables.SKYFORGE_WORKER_QUEUE ===
        "emails",
    );
    expect(worker?.inputs.timeout).toBe(60);
    const queueArn = ofType(run, "aws:sqs/queue:Queue").find((q) => q.name === "JobsEmailsQueueQueue")
      ?.outputs.arn;
    expect(
      ofType(run, "aws:lambda/eventSourceMapping:EventSourceMapping").map((m) => m.inputs),
    ).toContainEqual(
      expect.objectContaining({
        eventSourceArn: queueArn,
        batchSize: 5,
        scalingConfig: { maximumConcurrency: 3 },
      }),
    );
    expect(
      names.filter((n) => n.startsWith("JobsEmails") && appAlarms(run).some((a) => a.name === n)).sort(),
    ).toEqual([
      "JobsEmailsCronFailed",
      "JobsEmailsDeadJobs",
      "JobsEmailsDlqNotEmpty",
      "JobsEmailsNearRetention",
      "JobsEmailsOldestMessageAge",
      "JobsEmailsPausedJobs",
      "JobsEmailsWorkerErrors",
    ]);
    const body = String(ofType(run, "aws:cloudwatch/dashboard:Dashboard")[0]?.inputs.dashboardBody);
    expect(body).toContain('"title":"emails · ');
  }, 60_000);

  test("an invalid declaration stops the deploy before any resource is declared", async () => {
    const invalid = original.replace("maxConcurrency: 10,", "maxConcurrency: 1,");
    expect(invalid).not.toBe(original);
    const error = await withQueues(invalid, () =>
      runStage(copy.dir, "ci", false).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(StageFailed);
    // One error naming the app module, before anything at all was constructed in the stack.
    expect((error as StageFailed).programError).toMatch(
      /^app\/index\.ts: invalid declarations \(1\):\n- queue "default": maxConcurrency 1 is outside/,
    );
    expect((error as StageFailed).constructed).toEqual([]);
  }, 60_000);
});
