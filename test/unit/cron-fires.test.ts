import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { type FirePlanInput, MISSED_COUNT_LIMIT, planFires } from "../../lib/cron/fire-plan.ts";
import { fireTimesOf, nextFireAfter, ScheduleInput } from "../../lib/cron/schedule.ts";
import { fireRequest } from "../../lib/ops/cron-tick.ts";
import { parseDeclaration } from "../../lib/ops/sync-schedules.ts";
import type { ScheduleItem } from "../../lib/store/schedule-item.ts";

const declaredSchedules = app.schedules;

const at = (iso: string) => Date.parse(iso);
const isos = (ms: number[]) => ms.map((m) => new Date(m).toISOString());
const MIN = 60_000;
const HOUR = 60 * MIN;

function plan(cron: string, overrides: Partial<FirePlanInput> & { now: number }, timezone = "UTC") {
  const times = fireTimesOf({ cron, timezone });
  return planFires({
    nextRunAt: overrides.nextRunAt ?? (times.after(overrides.now - 1) as number),
    lookaheadMs: MIN,
    graceMs: MIN,
    misfire: "skip",
    maxFiresPerTick: 100,
    times,
    ...overrides,
  });
}

describe("fire plan", () => {
  test("a seconds field fires every 10 s inside one 60 s tick, ahead of time", () => {
    const now = at("2026-01-01T00:00:00Z");
    const p = plan("*/10 * * * * *", { now });
    expect(isos(p.fires)).toEqual(
      ["00", "10", "20", "30", "40", "50"].map((s) => `2026-01-01T00:00:${s}.000Z`),
    );
    expect(p.missed).toBe(0);
    expect(p.nextRunAt).toBe(at("2026-01-01T00:01:00Z"));
  });

  test("lookahead: a fire before now + lookahead is planned now; none at all without lookahead", () => {
    const now = at("2026-01-01T00:00:30Z");
    const nextRunAt = at("2026-01-01T00:01:00Z");
    expect(isos(plan("* * * * *", { now, nextRunAt, lookaheadMs: 45_000 }).fires)).toEqual([
      "2026-01-01T00:01:00.000Z",
    ]);
    const none = plan("* * * * *", { now, nextRunAt, lookaheadMs: 0 });
    expect(none).toEqual({ fires: [], missed: 0, nextRunAt });
  });

  test("grace: a late fire within grace is on time, an older one is a misfire", () => {
    const nextRunAt = at("2026-01-01T00:00:00Z");
    const late30 = plan("0 * * * *", { nextRunAt, now: nextRunAt + 30_000 });
    expect(late30.fires).toEqual([nextRunAt]);
    const late90 = plan("0 * * * *", { nextRunAt, now: nextRunAt + 90_000 });
    expect(late90).toEqual({ fires: [], missed: 1, nextRunAt: at("2026-01-01T01:00:00Z") });
  });

  test("misfire skip drops the missed fires; once collapses them into one at the latest", () => {
    const now = at("2026-01-01T10:00:00Z");
    const nextRunAt = now - HOUR;
    const skip = plan("* * * * *", { now, nextRunAt, misfire: "skip" });
    // 09:00..09:58 are older than now - grace; 09:59 and 10:00 are on time.
    expect(skip.missed).toBe(59);
    expect(isos(skip.fires)).toEqual(["2026-01-01T09:59:00.000Z", "2026-01-01T10:00:00.000Z"]);
    expect(skip.nextRunAt).toBe(at("2026-01-01T10:01:00Z"));
    const once = plan("* * * * *", { now, nextRunAt, misfire: "once" });
    expect(once.missed).toBe(58);
    expect(isos(once.fires)).toEqual([
      "2026-01-01T09:58:00.000Z",
      "2026-01-01T09:59:00.000Z",
      "2026-01-01T10:00:00.000Z",
    ]);
    expect(once.nextRunAt).toBe(skip.nextRunAt);
  });

  test("maxFiresPerTick caps the plan and leaves the rest to the next tick", () => {
    const now = at("2026-01-01T00:00:00Z");
    const p = plan("* * * * * *", { now, lookaheadMs: 10 * MIN, maxFiresPerTick: 100 });
    expect(p.fires).toHaveLength(100);
    expect(p.fires[99]).toBe(now + 99_000);
    expect(p.nextRunAt).toBe(now + 100_000);
  });

  test("a day of every-second misfires stops counting at the limit and jumps to the present", () => {
    const now = at("2026-01-02T00:00:00Z");
    const nextRunAt = now - 24 * HOUR;
    const skip = plan("* * * * * *", { now, nextRunAt, graceMs: 5_000, lookaheadMs: 2_000 });
    expect(skip.missed).toBe(MISSED_COUNT_LIMIT);
    expect(skip.fires).toEqual([
      now - 5_000,
      now - 4_000,
      now - 3_000,
      now - 2_000,
      now - 1_000,
      now,
      now + 1_000,
    ]);
    const once = plan("* * * * * *", { now, nextRunAt, graceMs: 5_000, lookaheadMs: 0, misfire: "once" });
    expect(once.fires).toEqual([now - 6_000, ...skip.fires.slice(0, 5)]);
  });

  test("planning is pure: the same input gives the same plan", () => {
    const now = at("2026-03-01T12:00:00Z");
    const input = { now, nextRunAt: now - 3 * HOUR, misfire: "once" as const };
    expect(plan("*/7 * * * *", input, "Asia/Kolkata")).toEqual(plan("*/7 * * * *", input, "Asia/Kolkata"));
  });
});

describe("time zones and DST (Europe/Berlin, croner's rules)", () => {
  const berlin = (cron: string, fromIso: string, hours: number) => {
    const now = at(fromIso);
    return plan(cron, { now, lookaheadMs: hours * HOUR }, "Europe/Berlin");
  };

  test("spring forward 2026-03-29: 02:30 doesn't exist; a fixed-time job fires once, at 03:00 CEST", () => {
    const p = berlin("0 30 2 * * *", "2026-03-27T12:00:00Z", 72);
    expect(isos(p.fires)).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // the gap: 03:00 CEST, right after the jump
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
  });

  test("spring forward: an interval job skips the times in the gap", () => {
    const p = berlin("0 */30 * * * *", "2026-03-29T00:00:00Z", 2);
    expect(isos(p.fires)).toEqual([
      "2026-03-29T00:00:00.000Z", // 01:00 CET
      "2026-03-29T00:30:00.000Z", // 01:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST (02:00 and 02:30 never happen)
      "2026-03-29T01:30:00.000Z", // 03:30 CEST
    ]);
  });

  test("fall back 2026-10-25: 02:30 happens twice; a fixed-time job fires once, on the first", () => {
    const p = berlin("0 30 2 * * *", "2026-10-24T12:00:00Z", 48);
    expect(isos(p.fires)).toEqual([
      "2026-10-25T00:30:00.000Z", // 02:30 CEST; 02:30 CET (01:30Z) does not fire
      "2026-10-26T01:30:00.000Z", // 02:30 CET
    ]);
  });

  test("fall back: an interval job fires on both passes, each distinct instant once", () => {
    const p = berlin("0 */30 2 * * *", "2026-10-24T22:00:00Z", 6);
    expect(isos(p.fires)).toEqual([
      "2026-10-25T00:00:00.000Z", // 02:00 CEST
      "2026-10-25T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T01:00:00.000Z", // 02:00 CET
      "2026-10-25T01:30:00.000Z", // 02:30 CET
    ]);
    expect(new Set(p.fires).size).toBe(p.fires.length);
  });

  test("nextFireAfter is strictly after and honours the zone", () => {
    const s = { cron: "0 0 9 * * *", timezone: "America/New_York" };
    expect(nextFireAfter(s, at("2026-01-05T14:00:00Z"))).toBe(at("2026-01-06T14:00:00Z"));
    expect(nextFireAfter(s, at("2026-07-05T12:59:59.999Z"))).toBe(at("2026-07-05T13:00:00Z"));
  });
});

describe("ScheduleInput", () => {
  const issues = (raw: unknown) => {
    const r = ScheduleInput.safeParse(raw);
    return r.success ? [] : r.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  };

  test("fills defaults and accepts 5 or 6 fields", () => {
    expect(ScheduleInput.parse({ cron: "*/5 * * * *", kind: "echo" })).toEqual({
      cron: "*/5 * * * *",
      kind: "echo",
      timezone: "UTC",
      enabled: true,
      misfire: "skip",
    });
    expect(issues({ cron: "*/10 * * * * *", kind: "echo", timezone: "Europe/Berlin" })).toEqual([]);
  });

  test("a bad cron names the expression and croner's reason", () => {
    expect(issues({ cron: "61 * * * *", kind: "echo" })).toEqual([
      { path: "cron", message: 'cron: invalid expression "61 * * * *": Invalid value for minute: 61' },
    ]);
    const [seven] = issues({ cron: "0 0 0 * * * 2030", kind: "echo" });
    expect(seven?.message).toMatch(/^cron: invalid expression "0 0 0 \* \* \* 2030": .*5 or 6 parts/);
    expect(issues({ cron: "0 0 30 2 *", kind: "echo" })).toEqual([
      { path: "cron", message: 'cron: expression "0 0 30 2 *" never fires' },
    ]);
  });

  test("a bad time zone is named", () => {
    expect(issues({ cron: "* * * * *", kind: "echo", timezone: "Mars/Base" })).toEqual([
      { path: "timezone", message: 'timezone: unknown time zone "Mars/Base"' },
    ]);
  });

  test("unknown fields and bad policies are rejected", () => {
    expect(issues({ cron: "* * * * *", kind: "echo", every: "1m" })[0]?.message).toMatch(/every/);
    expect(issues({ cron: "* * * * *", kind: "echo", misfire: "all" })[0]?.path).toBe("misfire");
  });
});

describe("declarations and fires", () => {
  test("the demo declaration is valid and its hash ignores key order and spelled-out defaults", () => {
    expect(declaredSchedules.map((d) => parseDeclaration(d).name)).toEqual(["heartbeat-echo"]);
    const a = parseDeclaration({ name: "x", cron: "* * * * *", kind: "echo", payload: { a: 1, b: 2 } });
    const b = parseDeclaration({
      payload: { b: 2, a: 1 },
      misfire: "skip",
      kind: "echo",
      timezone: "UTC",
      cron: "* * * * *",
      name: "x",
    });
    expect(b.hash).toBe(a.hash);
    expect(parseDeclaration({ name: "x", cron: "*/2 * * * *", kind: "echo" }).hash).not.toBe(a.hash);
    expect(() => parseDeclaration({ name: "bad name", cron: "nope", kind: "echo" })).toThrow(
      /declared schedule "bad name" is invalid: .*cron: invalid expression "nope"/,
    );
  });

  test("a fire's job carries the fire time as runAt and in its unique key", () => {
    const schedule = {
      name: "nightly",
      kind: "echo",
      payloadJson: '{"a":1}',
      queue: "default",
    } as ScheduleItem;
    expect(fireRequest(schedule, at("2026-01-01T02:00:00Z"))).toEqual({
      kind: "echo",
      payload: { a: 1 },
      queue: "default",
      runAt: "2026-01-01T02:00:00.000Z",
      uniqueKey: "cron:nightly:2026-01-01T02:00:00.000Z",
    });
  });
});
