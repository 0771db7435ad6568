/**
 * Cron ticks and the schedule routes through a full engine on fauxqs + dynalite (the store
 * operations on both DynamoDB emulators are in cron-store.test.ts). Time is a ManualClock: misfires
 * happen by moving it, never by sleeping.
 */
import { GetQueueAttributesCommand } from "@aws-sdk/client-sqs";
import { ScanCommand } from "@aws-sdk/lib-dynamodb";
import middy from "@middy/core";
import httpRouterHandler from "@middy/http-router";
import { afterEach, describe, expect, it } from "vitest";
import { errorResponder, type HttpEvent, type HttpResult } from "../../lib/api/http.ts";
import { scheduleRoutes } from "../../lib/api/schedule-routes.ts";
import {
  ScheduleInput,
  type ScheduleInputIn,
  scheduleWrite,
  toScheduleView,
} from "../../lib/cron/schedule.ts";
import type { ScheduleDeclaration } from "../../lib/declarations/schedule-declaration.ts";
import { ConfigError } from "../../lib/errors.ts";
import { CronHandler } from "../../lib/handlers/cron.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { runCronTick } from "../../lib/ops/cron-tick.ts";
import { syncDeclaredSchedules } from "../../lib/ops/sync-schedules.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import type { ScheduleItem } from "../../lib/store/schedule-item.ts";
import * as ops from "../../lib/store/schedule-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { createHarness, type Harness } from "../support/engine-harness.ts";
import { emulatorsForFile } from "../support/test-emulators.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const TICK = 60_000;
/** Parsed settings with their first fire after the store's now, as the API and the sync write them. */
const input = (ctx: StoreContext, raw: ScheduleInputIn) =>
  scheduleWrite(ScheduleInput.parse(raw), ctx.clock.now());
const iso = (ms: number) => new Date(ms).toISOString();

describe("cron ticks and routes on fauxqs + dynalite", () => {
  const emulators = emulatorsForFile();
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const setup = async () => {
    const clock = new ManualClock(T0);
    h = await createHarness(emulators(), { clock });
    const { engine } = h;
    const tick = (owner = "runner-1") => runCronTick({ engine, owner, tickMs: TICK });
    const put = (name: string, raw: ScheduleInputIn) =>
      ops.putSchedule(engine.store, name, input(engine.store, raw), { source: "api" });
    return { clock, h, engine, tick, put };
  };

  /** Every job item in the table. */
  const jobs = async (harness: Harness): Promise<JobItem[]> => {
    const ctx = harness.engine.store;
    const out = await ctx.doc.send(new ScanCommand({ TableName: ctx.table, ConsistentRead: true }));
    return ((out.Items ?? []) as JobItem[]).filter((i) => i.sk === "job").sort((x, y) => x.runAt - y.runAt);
  };

  /** Messages in the queue, visible or still delayed. */
  const messages = async (harness: Harness): Promise<number> => {
    const out = await harness.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: harness.urls.url, AttributeNames: ["All"] }),
    );
    const a = out.Attributes ?? {};
    return Number(a.ApproximateNumberOfMessages ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0);
  };

  /** The name of every command `engine`'s document client sends from now on, in order. */
  const commandsSent = (engine: Harness["engine"]): string[] => {
    const calls: string[] = [];
    engine.store.doc.middlewareStack.add(
      (next, context) => async (args) => {
        calls.push(context.commandName ?? "?");
        return next(args);
      },
      { step: "initialize", name: "countCalls" },
    );
    return calls;
  };

  it("a schedule with a seconds field and a time zone fires at the right instants", async () => {
    const { clock, tick, put, h } = await setup();
    clock.set(Date.parse("2026-01-01T03:59:30Z"));
    // 09:30 in India (UTC+05:30) is 04:00 UTC; every 15 s within that minute.
    await put("kolkata", { cron: "*/15 30 9 * * *", timezone: "Asia/Kolkata", kind: "echo" });
    expect(await tick()).toMatchObject({ leader: true, due: 1, fired: 2, advanced: 1 });
    clock.advance(TICK);
    expect(await tick()).toMatchObject({ fired: 2 });
    const found = await jobs(h);
    const times = ["00", "15", "30", "45"].map((s) => `2026-01-01T04:00:${s}.000Z`);
    expect(found.map((j) => j.uniqueKey)).toEqual(times.map((t) => `cron:kolkata:${t}`));
    expect(found.map((j) => iso(j.runAt))).toEqual(times);
    expect(await messages(h)).toBe(4);
    const s = await ops.getSchedule(h.engine.store, "kolkata");
    expect(s).toMatchObject({
      nextRunAt: Date.parse("2026-01-02T04:00:00Z"),
      lastRunAt: Date.parse(times[3] as string),
    });
  });

  it("a double tick, sequential or concurrent, enqueues each fire exactly once", async () => {
    const { tick, put, h, engine, clock } = await setup();
    clock.set(T0 - 1_000);
    await put("tens", { cron: "*/10 * * * * *", kind: "echo" });
    clock.set(T0);
    const ctx = engine.store;
    const first = await tick();
    expect(first).toMatchObject({ fired: 6, duplicates: 0 });
    expect(await tick()).toMatchObject({ leader: true, due: 0, fired: 0 });
    // A runner that died after enqueueing but before advancing: the next tick replans the same fires.
    await ops.advanceSchedule(ctx, "tens", T0 + 60_000, T0 + 10_000, undefined);
    expect(await tick()).toMatchObject({ fired: 0, duplicates: 5, advanced: 1 });
    expect(await jobs(h)).toHaveLength(6);

    clock.advance(TICK);
    const both = await Promise.all([tick("runner-1"), tick("runner-2")]);
    expect(both.some((r) => r.leader)).toBe(true);
    expect(both.reduce((n, r) => n + r.fired, 0)).toBe(6);
    // One runner overlapping itself (same owner: both lead) still fires each instant once.
    clock.advance(TICK);
    const same = await Promise.all([tick("runner-1"), tick("runner-1")]);
    expect(same.every((r) => r.leader)).toBe(true);
    clock.advance(TICK); // a later tick picks up anything an overlap deferred
    await tick();
    const found = await jobs(h);
    const keys = found.map((j) => j.uniqueKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(found).toHaveLength(24);
    expect(await messages(h)).toBe(24);
    expect(h.metrics.total("enqueued")).toBe(24);
    expect(h.metrics.total("cronFired")).toBe(24);
  });

  it("misfires after the clock jumps an hour: skip drops them, once fires one", async () => {
    const { clock, tick, put, h } = await setup();
    clock.set(T0 - 1_000);
    await put("skip", { cron: "0 * * * * *", kind: "echo", payload: "skip", misfire: "skip" });
    await put("once", { cron: "0 * * * * *", kind: "echo", payload: "once", misfire: "once" });
    clock.set(T0);
    expect(await tick()).toMatchObject({ fired: 2 }); // 00:00 for both; nextRunAt 00:01
    clock.set(T0 + 60 * 60_000); // 01:00: 00:01..00:58 are older than the grace
    const r = await tick();
    expect(r).toMatchObject({ due: 2, missed: 58 + 57, fired: 2 + 3 });
    expect(h.metrics.total("cronMissed")).toBe(58 + 57);
    const keysOf = async (name: string) =>
      (await jobs(h))
        .filter((j) => j.uniqueKey?.startsWith(`cron:${name}:`))
        .map((j) => j.uniqueKey?.slice(-13, -8))
        .sort();
    expect(await keysOf("skip")).toEqual(["00:00", "00:59", "01:00"]);
    expect(await keysOf("once")).toEqual(["00:00", "00:58", "00:59", "01:00"]);
  });

  it("a schedule that can't enqueue is reported and doesn't block the others", async () => {
    const { tick, put, engine, clock, h } = await setup();
    const ctx = engine.store;
    clock.set(T0 - 1_000);
    // Stored directly: the API would refuse the unknown kind, but a kind can be removed after the fact.
    await ops.putSchedule(ctx, "ghost", input(ctx, { cron: "* * * * *", kind: "no-such-kind" }), {
      source: "api",
    });
    await put("ok", { cron: "* * * * *", kind: "echo" });
    clock.set(T0);
    const r = await tick();
    expect(r).toMatchObject({ fired: 1, advanced: 2 });
    expect(r.failed).toEqual([
      {
        name: "ghost",
        fireTime: iso(T0),
        error: expect.stringMatching(/unknown kind "no-such-kind"/),
      },
    ]);
    // The failure is where an operator looks: the schedule's own view, and a metric an alarm watches.
    const ghost = (await ops.listSchedules(ctx)).find((x) => x.name === "ghost");
    expect(ghost?.lastError).toMatch(/unknown kind "no-such-kind"/);
    expect(ghost?.lastErrorAt).toBe(T0);
    expect(toScheduleView(ghost as ScheduleItem)).toMatchObject({ lastErrorAt: iso(T0) });
    expect(h.metrics.total("cronFailed")).toBe(1);
  });

  it("DynamoDB requests: lease, query and release at idle; lock, job and advance per fire", async () => {
    const { tick, put, engine, clock } = await setup();
    await put("hourly", { cron: "0 * * * *", kind: "echo" });
    const calls = commandsSent(engine);
    expect(await tick()).toMatchObject({ leader: true, schedules: 1, due: 0 });
    expect(calls).toEqual(["UpdateItemCommand", "QueryCommand", "DeleteItemCommand"]);
    calls.length = 0;
    clock.set(T0 + 3_600_000 - 1_000); // 01:00 falls inside this tick's lookahead
    expect(await tick()).toMatchObject({ fired: 1, advanced: 1 });
    expect(calls).toEqual([
      "UpdateItemCommand", // lease
      "QueryCommand", // schedules
      "PutItemCommand", // the fire's unique-key lock (SendMessage goes between these two)
      "PutItemCommand", // the job item
      "UpdateItemCommand", // advance
      "DeleteItemCommand", // release
    ]);
  });

  it("the cron handler syncs the declared schedules once per process, before its first tick; a failed sync is tried again", async () => {
    const { engine } = await setup();
    const declared: ScheduleDeclaration[] = [
      { name: "from-code", cron: "0 * * * *", kind: "echo" },
      { name: "from-code", cron: "0 0 * * *", kind: "echo" },
    ];
    const cron = new CronHandler(
      { ...engine, app: { ...engine.app, schedules: declared } },
      {
        tickMs: TICK,
        cleanupSweepItemsPerRun: 0,
      },
    );
    await expect(cron.run("runner-1")).rejects.toThrow(ConfigError);
    declared.pop(); // the duplicate fixed: the next tick syncs again
    const calls = commandsSent(engine);
    expect(await cron.run("runner-1")).toMatchObject({ leader: true, schedules: 1 });
    expect(calls.filter((c) => c === "PutItemCommand")).toHaveLength(1); // the synced schedule
    expect((await ops.listSchedules(engine.store)).map((x) => [x.name, x.source])).toEqual([
      ["from-code", "code"],
    ]);
    calls.length = 0;
    await cron.syncDeclared();
    expect(await cron.run("runner-1")).toMatchObject({ leader: true, schedules: 1 });
    expect(calls).toEqual(["UpdateItemCommand", "QueryCommand", "DeleteItemCommand"]); // the tick alone
  });

  it("serves PUT, GET and DELETE /schedules with 4xx for client mistakes", async () => {
    const { engine } = await setup();
    const declared: ScheduleDeclaration[] = [{ name: "from-code", cron: "0 * * * *", kind: "echo" }];
    await syncDeclaredSchedules(engine.store, declared);
    const api = middy<HttpEvent, HttpResult>()
      .use(errorResponder(silentLog))
      .handler(httpRouterHandler<HttpEvent, HttpResult>({ routes: scheduleRoutes(engine, declared) }));
    const call = async (method: string, path: string, body?: unknown) => {
      const event = {
        version: "2.0",
        rawPath: path,
        requestContext: { http: { method, path } },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        isBase64Encoded: false,
      } as unknown as HttpEvent;
      const res = await api(event, {} as never);
      return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : undefined };
    };

    const created = await call("PUT", "/schedules/nightly", {
      cron: "0 0 2 * * *",
      timezone: "Europe/Berlin",
      kind: "echo",
    });
    expect(created).toMatchObject({
      status: 201,
      body: { name: "nightly", source: "api", nextRunAt: "2026-01-01T01:00:00.000Z" },
    });
    expect((await call("PUT", "/schedules/nightly", { cron: "0 0 3 * * *", kind: "echo" })).status).toBe(200);
    const list = await call("GET", "/schedules");
    expect(list.body.items.map((s: { name: string }) => s.name)).toEqual(["from-code", "nightly"]);

    const badCron = await call("PUT", "/schedules/x", { cron: "61 * * * *", kind: "echo" });
    expect(badCron).toMatchObject({ status: 400, body: { error: { code: "validation_error" } } });
    expect(badCron.body.error.message).toMatch(
      /cron: invalid expression "61 \* \* \* \*": Invalid value for minute/,
    );
    const badZone = await call("PUT", "/schedules/x", {
      cron: "* * * * *",
      timezone: "Mars/Base",
      kind: "echo",
    });
    expect(badZone.body.error.message).toMatch(/timezone: unknown time zone "Mars\/Base"/);
    expect((await call("PUT", "/schedules/x", { cron: "* * * * *", kind: "nope" })).body.error.code).toBe(
      "unknown_kind",
    );
    const badQueue = await call("PUT", "/schedules/x", { cron: "* * * * *", kind: "echo", queue: "nowhere" });
    expect(badQueue).toMatchObject({ status: 400, body: { error: { message: 'unknown queue "nowhere"' } } });
    const badName = await call("PUT", "/schedules/bad%20name", { cron: "* * * * *", kind: "echo" });
    expect(badName.status).toBe(400);
    expect(
      (await call("PUT", "/schedules/x", { cron: "* * * * *", kind: "sleep", payload: { ms: "x" } })).status,
    ).toBe(400);

    const codeDelete = await call("DELETE", "/schedules/from-code");
    expect(codeDelete).toMatchObject({ status: 409, body: { error: { code: "conflict" } } });
    expect(codeDelete.body.error.message).toMatch(/PUT enabled=false.*app\/schedules\.ts/);
    expect((await call("DELETE", "/schedules/nightly")).status).toBe(204);
    expect((await call("DELETE", "/schedules/nightly")).status).toBe(404);
  });
});
