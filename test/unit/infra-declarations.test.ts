import { afterEach, describe, expect, test, vi } from "vitest";
import { app } from "../../app/index.ts";
import { API_CATCH_ALL_ROUTE_KEY, API_ROUTE_KEYS } from "../../lib/api/route-keys.ts";
import { type QueueDeclaration, tierOf, visibilityTimeoutSeconds } from "../../lib/app/queue-declaration.ts";
import { gaugeMetrics } from "../../lib/observability/metric-names.ts";
import { type Declared, installFakeSst, type Loose } from "../support/fake-sst.ts";

const { queues } = app;

/**
 * What sst.config.ts and infra/ declare, evaluated against recording fakes of SST's globals: every
 * resource, its settings, and each function's permissions. Types are checked by `npm run check:infra`.
 */
let fake: ReturnType<typeof installFakeSst> | undefined;
afterEach(() => {
  fake?.uninstall();
  fake = undefined;
  vi.doUnmock("../../app/index.ts");
  vi.resetModules();
});

async function deploy(stage = "test", dev = false) {
  fake = installFakeSst({ stage, dev });
  vi.resetModules();
  // A computed specifier keeps this project's tsc out of sst.config.ts and infra/, which
  // tsconfig.infra.json checks against SST's own types.
  const entry = "../../sst.config.ts";
  const config = ((await import(/* @vite-ignore */ entry)) as { default: unknown }).default as {
    app(input: { stage: string }): Record<string, unknown>;
    run(): Promise<Record<string, unknown>>;
  };
  const outputs = await config.run();
  return { fake, outputs, app: config.app({ stage }) };
}

type Permission = { actions: string[]; resources: unknown[] };
const permissionsOf = (args: Record<string, Loose>): Permission[] => args.permissions ?? [];
const str = (v: unknown) => String(v);
/** Every function the stack declares, with the name it can be recognised by. */
function functions(declared: Declared[]) {
  const out: { id: string; args: Record<string, Loose> }[] = [];
  for (const d of declared) {
    if (d.type === "sst.aws.Function") out.push({ id: d.name, args: d.args });
    if (d.type === "sst.aws.CronV2") out.push({ id: `cron:${d.name}`, args: d.args.function });
    for (const c of d.calls)
      if (c.method === "subscribe") out.push({ id: `worker:${d.name}`, args: c.args[0] });
  }
  return out;
}

describe("infra declares, per queue declaration", () => {
  test("a queue and a DLQ, both encrypted and kept 14 days, with visibility 6× the worker timeout and the declared redrive", async () => {
    const { fake } = await deploy();
    const sqsQueues = fake.of("sst.aws.Queue");
    expect(sqsQueues.map((q) => q.name).sort()).toEqual([
      "DefaultDlq",
      "DefaultQueue",
      "HeavyDlq",
      "HeavyQueue",
    ]);
    for (const q of sqsQueues) {
      expect(q.args.transform.queue.sqsManagedSseEnabled, q.name).toBe(true);
      // SQS's maximum: a paused queue or a long retry chain keeps its messages as long as SQS allows.
      expect(q.args.transform.queue.messageRetentionSeconds, q.name).toBe(14 * 86_400);
    }
    for (const decl of queues) {
      const main = sqsQueues.find((q) => q.name === `${decl.name === "default" ? "Default" : "Heavy"}Queue`);
      expect(main?.args.visibilityTimeout).toBe(`${visibilityTimeoutSeconds(decl)} seconds`);
      expect(visibilityTimeoutSeconds(decl)).toBeGreaterThanOrEqual(6 * decl.workerTimeoutSeconds);
      expect(main?.args.dlq).toEqual({ queue: expect.anything(), retry: decl.maxReceiveCount });
      expect(str(main?.args.dlq.queue)).toMatch(/Queue:(Default|Heavy)Dlq\.arn/);
    }
  });

  test("a worker for each Lambda-tier queue only: partial responses, declared batching and ESM concurrency", async () => {
    const { fake } = await deploy();
    const subscribed = fake.of("sst.aws.Queue").filter((q) => q.calls.some((c) => c.method === "subscribe"));
    expect(subscribed.map((q) => q.name)).toEqual(["DefaultQueue"]);
    const [fn, opts] = subscribed[0]?.calls[0]?.args ?? [];
    const decl = queues[0] as QueueDeclaration;
    expect(fn).toMatchObject({
      handler: "functions/worker.handler",
      timeout: `${decl.workerTimeoutSeconds} seconds`,
      runtime: "nodejs24.x",
      architecture: "arm64",
      logging: { format: "json", retention: "1 month" },
      environment: expect.objectContaining({ SKYFORGE_WORKER_QUEUE: "default" }),
    });
    expect(opts.batch).toEqual({
      size: decl.batchSize,
      window: `${decl.batchWindowSeconds} seconds`,
      partialResponses: true,
    });
    const esm: Record<string, unknown> = {};
    opts.transform.eventSourceMapping(esm);
    expect(esm).toEqual({ scalingConfig: { maximumConcurrency: decl.maxConcurrency } });
  });

  test("adding a queue declaration adds its queue, DLQ, worker, alarms and dashboard row, with no other edit", async () => {
    const extra: QueueDeclaration = { ...(queues[0] as QueueDeclaration), name: "emails" };
    vi.doMock("../../app/index.ts", async (original) => {
      const real = await original<typeof import("../../app/index.ts")>();
      return { ...real, app: { ...real.app, queues: [...real.app.queues, extra] } };
    });
    const { fake } = await deploy();
    const names = fake.declared.map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(["EmailsQueue", "EmailsDlq"]));
    expect(fake.of("sst.aws.Queue").find((q) => q.name === "EmailsQueue")?.calls[0]?.method).toBe(
      "subscribe",
    );
    expect(names).toEqual(
      expect.arrayContaining([
        "EmailsDlqNotEmpty",
        "EmailsOldestMessageAge",
        "EmailsNearRetention",
        "EmailsDeadJobs",
        "EmailsWorkerErrors",
      ]),
    );
    const body = JSON.parse(fake.of("aws.cloudwatch.Dashboard")[0]?.args.dashboardBody);
    expect(body.widgets.some((w: Loose) => String(w.properties?.title).startsWith("emails · "))).toBe(true);
    const reaper = fake.of("sst.aws.CronV2").find((c) => c.name === "Reaper");
    const dlqReads = permissionsOf(reaper?.args.function).find((p) =>
      p.actions.includes("sqs:ReceiveMessage"),
    );
    expect(dlqReads?.resources.map(str)).toContain("Queue:EmailsDlq.arn");
  });
});

describe("least privilege and configuration hygiene", () => {
  test("every function names its actions and resources; the only wildcard is the table's index/*", async () => {
    const { fake } = await deploy();
    const all = [
      ...functions(fake.declared),
      { id: "pool", args: fake.of("sst.aws.Service")[0]?.args ?? {} },
    ];
    expect(all.map((f) => f.id).sort()).toEqual(
      [
        "ApiHandler",
        "Enqueue",
        "cron:Cleanup",
        "cron:Cron",
        "cron:Reaper",
        "pool",
        "worker:DefaultQueue",
      ].sort(),
    );
    for (const f of all) {
      expect(f.args.link, `${f.id} uses links, which grant sqs:* / dynamodb:*`).toBeUndefined();
      const perms = permissionsOf(f.args);
      expect(perms.length, f.id).toBeGreaterThan(0);
      for (const p of perms) {
        for (const a of p.actions) expect(a, f.id).not.toContain("*");
        for (const r of p.resources.map(str)) {
          expect(r, f.id).not.toBe("*");
          if (r.includes("*")) expect(r, f.id).toBe("Dynamo:Jobs.arn/index/*");
        }
      }
    }
  });

  test("only the API and the reaper may update event source mappings, and only the workers' own", async () => {
    const { fake } = await deploy();
    for (const f of functions(fake.declared)) {
      const esm = permissionsOf(f.args).filter((p) => p.actions.includes("lambda:UpdateEventSourceMapping"));
      if (f.id === "ApiHandler" || f.id === "cron:Reaper") {
        expect(
          esm.flatMap((p) => p.resources.map(str)),
          f.id,
        ).toEqual(["Queue:DefaultQueue.subscriber.nodes.eventSourceMapping.arn"]);
      } else {
        expect(esm, f.id).toEqual([]);
      }
    }
  });

  test("environments carry names and URLs only", async () => {
    const { fake } = await deploy();
    const envs = [
      ...functions(fake.declared).map((f) => f.args.environment ?? {}),
      fake.of("sst.aws.Service")[0]?.args.environment ?? {},
    ];
    for (const env of envs) {
      for (const name of Object.keys(env)) expect(name).toMatch(/^SKYFORGE_[A-Z_]+$/);
      expect(JSON.stringify(env)).not.toMatch(/secret|password|token|AKIA/i);
    }
  });

  test("every API route, and the catch-all that answers 405 and 404 in our shape, is IAM-authorized and served by one function", async () => {
    const { fake, outputs } = await deploy();
    const api = fake.of("sst.aws.ApiGatewayV2")[0];
    const routes = api?.calls.filter((c) => c.method === "route") ?? [];
    expect(routes.map((r) => r.args[0]).sort()).toEqual([...API_ROUTE_KEYS, API_CATCH_ALL_ROUTE_KEY].sort());
    for (const r of routes) {
      expect(str(r.args[1])).toBe("Function:ApiHandler.arn");
      expect(r.args[2]).toEqual({ auth: { iam: true } });
    }
    expect(Object.keys(outputs).sort()).toEqual([
      "api",
      "dashboard",
      "enqueueFunction",
      "poolService",
      "table",
    ]);
    expect(str(outputs.enqueueFunction)).toBe("Function:Enqueue.name");
  });
});

describe("schedules, storage, pool and monitoring", () => {
  test("three CronV2 schedules every minute; the table with TTL, one index, deletion protection in production", async () => {
    const { fake, app } = await deploy("prod");
    expect(fake.of("sst.aws.CronV2").map((c) => [c.name, c.args.schedule])).toEqual([
      ["Reaper", "rate(1 minute)"],
      ["Cleanup", "rate(1 minute)"],
      ["Cron", "rate(1 minute)"],
    ]);
    const table = fake.of("sst.aws.Dynamo")[0];
    expect(table?.args).toMatchObject({ ttl: "expiresAt", deletionProtection: true });
    expect(Object.keys(table?.args.globalIndexes ?? {})).toEqual(["byStatus"]);
    expect(app).toMatchObject({ removal: "retain", protect: true });
    fake.uninstall();
    const dev = await deploy("alice");
    expect(dev.fake.of("sst.aws.Dynamo")[0]?.args.deletionProtection).toBe(false);
    expect(dev.app).toMatchObject({ removal: "remove", protect: false });
  });

  test("the pool: arm64 from the Dockerfile, 0 tasks at rest, backlog step scaling, a 25 s drain", async () => {
    const { fake } = await deploy();
    const service = fake.of("sst.aws.Service")[0];
    expect(service?.args).toMatchObject({
      architecture: "arm64",
      image: { context: ".", dockerfile: "infra/pool.Dockerfile" },
      scaling: { min: 0, cpuUtilization: false, memoryUtilization: false },
      environment: expect.objectContaining({ SKYFORGE_POOL_DRAIN_SECONDS: "25" }),
    });
    const receive = permissionsOf(service?.args ?? {}).find((p) => p.actions.includes("sqs:ReceiveMessage"));
    expect(receive?.resources.map(str)).toEqual(["Queue:HeavyQueue.arn"]);
    expect(fake.of("aws.appautoscaling.Policy").map((p) => p.name)).toEqual(["PoolScaleOut", "PoolScaleIn"]);
    const backlog = fake.of("aws.cloudwatch.MetricAlarm").find((a) => a.name === "PoolBacklogHeavy");
    expect(backlog?.args).toMatchObject({
      metricName: "ApproximateNumberOfMessagesVisible",
      threshold: 0,
      comparisonOperator: "GreaterThanThreshold",
    });
    expect(str(backlog?.args.dimensions.QueueName)).toBe("Queue:HeavyQueue.nodes.queue.name");
    expect(str(backlog?.args.alarmActions[0])).toBe("Policy:PoolScaleOut.arn");
    const idle = fake.of("aws.cloudwatch.MetricAlarm").find((a) => a.name === "PoolIdle");
    expect(str(idle?.args.alarmActions[0])).toBe("Policy:PoolScaleIn.arn");
  });

  test("under sst dev no scaling resources are declared and the pool runs as a local command", async () => {
    const { fake } = await deploy("alice", true);
    expect(fake.of("aws.appautoscaling.Policy")).toEqual([]);
    expect(fake.of("sst.aws.Service")[0]?.args.dev).toEqual({
      command: "node --import tsx functions/pool/main.ts",
    });
  });

  test("the dashboard has a row per queue and the pool's children; alarms only notify when configured", async () => {
    const { fake } = await deploy();
    const body = JSON.parse(fake.of("aws.cloudwatch.Dashboard")[0]?.args.dashboardBody);
    for (const q of queues) {
      expect(body.widgets.some((w: Loose) => String(w.properties?.title).startsWith(`${q.name} · `))).toBe(
        true,
      );
    }
    const metricNames = JSON.stringify(body);
    for (const g of gaugeMetrics) expect(metricNames).toContain(`"${g}"`);
    const alarms = fake.of("aws.cloudwatch.MetricAlarm").filter((a) => !a.name.startsWith("Pool"));
    const perQueue = queues.map((q) => (tierOf(q) === "lambda" ? 6 : 5)).reduce((a, b) => a + b, 0);
    expect(alarms).toHaveLength(perQueue);
    for (const a of alarms) expect(a.args.alarmActions).toEqual([]);
    expect(fake.of("aws.sns.Topic")).toEqual([]);
  });

  test("SKYFORGE_ALARM_EMAIL adds a topic with that address subscribed, and every alarm notifies it", async () => {
    vi.stubEnv("SKYFORGE_ALARM_EMAIL", "ops@example.com");
    try {
      const { fake } = await deploy();
      expect(fake.of("aws.sns.TopicSubscription")[0]?.args).toMatchObject({
        protocol: "email",
        endpoint: "ops@example.com",
      });
      const alarms = fake.of("aws.cloudwatch.MetricAlarm").filter((a) => !a.name.startsWith("Pool"));
      for (const a of alarms) expect(a.args.alarmActions.map(str)).toEqual(["Topic:AlarmTopic.arn"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test("an invalid declaration stops the deploy before any resource is declared", async () => {
    vi.doMock("../../app/index.ts", async (original) => {
      const real = await original<typeof import("../../app/index.ts")>();
      return {
        ...real,
        app: { ...real.app, queues: real.app.queues.map((q) => ({ ...q, maxConcurrency: 1 })) },
      };
    });
    await expect(deploy()).rejects.toThrow(/maxConcurrency/);
    expect(fake?.declared).toEqual([]);
  });
});
