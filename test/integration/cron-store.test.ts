/**
 * Cron's store operations (leader lease, schedules, declared-schedule sync) against real SDK clients
 * on both DynamoDB emulators. Time is a ManualClock: leases expire by moving it, never by sleeping.
 */
import { describe, expect, it } from "vitest";
import { ScheduleInput, type ScheduleInputIn, scheduleWrite } from "../../lib/cron/schedule.ts";
import type { ScheduleDeclaration } from "../../lib/declarations/schedule-declaration.ts";
import { syncDeclaredSchedules } from "../../lib/ops/sync-schedules.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import * as ops from "../../lib/store/schedule-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { clientOn, dynamoBackends, freshTable } from "../support/dynamo-backends.ts";

const T0 = Date.parse("2026-01-01T00:00:00Z");
/** Parsed settings with their first fire after the store's now, as the API and the sync write them. */
const input = (ctx: StoreContext, raw: ScheduleInputIn) =>
  scheduleWrite(ScheduleInput.parse(raw), ctx.clock.now());

describe.each(dynamoBackends)("cron store operations on $name", (factory) => {
  const client = clientOn(factory);
  const fresh = async (): Promise<{ ctx: StoreContext; clock: ManualClock }> => {
    const clock = new ManualClock(T0);
    return { ctx: createStoreContext(client(), await freshTable(client(), "cron"), clock), clock };
  };

  it("leader lease: one holder; renewal; takeover after expiry; release lets the next one in", async () => {
    const { ctx, clock } = await fresh();
    expect(await ops.acquireLease(ctx, "cron", "a", 30_000)).toEqual({ held: true, leaseUntil: T0 + 30_000 });
    expect(await ops.acquireLease(ctx, "cron", "b", 30_000)).toEqual({
      held: false,
      owner: "a",
      leaseUntil: T0 + 30_000,
    });
    clock.advance(20_000);
    expect((await ops.acquireLease(ctx, "cron", "a", 30_000)).held).toBe(true); // renewal
    clock.advance(29_000);
    expect((await ops.acquireLease(ctx, "cron", "b", 30_000)).held).toBe(false);
    clock.advance(2_000); // a stopped renewing: its lease has lapsed
    expect((await ops.acquireLease(ctx, "cron", "b", 30_000)).held).toBe(true);
    expect(await ops.releaseLease(ctx, "cron", "a")).toBe(false); // a can't release b's lease
    expect((await ops.acquireLease(ctx, "cron", "a", 30_000)).held).toBe(false);
    expect(await ops.releaseLease(ctx, "cron", "b")).toBe(true);
    expect((await ops.acquireLease(ctx, "cron", "a", 30_000)).held).toBe(true);
  });

  it("put, re-time, advance (a second runner loses) and delete by source", async () => {
    const { ctx, clock } = await fresh();
    const first = await ops.putSchedule(ctx, "s", input(ctx, { cron: "*/5 * * * *", kind: "echo" }), {
      source: "api",
    });
    expect(first).toMatchObject({ created: true, item: { nextRunAt: T0 + 300_000, revision: 1 } });
    expect(await ops.advanceSchedule(ctx, "s", T0 + 300_000, T0 + 600_000, T0 + 300_000)).toBe(true);
    expect(await ops.advanceSchedule(ctx, "s", T0 + 300_000, T0 + 600_000, T0 + 300_000)).toBe(false);
    // A payload edit keeps the advanced nextRunAt; a cron edit re-times from now.
    clock.advance(1_000);
    const edited = await ops.putSchedule(
      ctx,
      "s",
      input(ctx, { cron: "*/5 * * * *", kind: "echo", payload: 1 }),
      {
        source: "api",
      },
    );
    expect(edited.item).toMatchObject({ nextRunAt: T0 + 600_000, lastRunAt: T0 + 300_000, revision: 2 });
    const retimed = await ops.putSchedule(ctx, "s", input(ctx, { cron: "0 * * * *", kind: "echo" }), {
      source: "api",
    });
    expect(retimed.item.nextRunAt).toBe(T0 + 3_600_000);
    const disabled = await ops.putSchedule(
      ctx,
      "s",
      input(ctx, { cron: "0 * * * *", kind: "echo", enabled: false }),
      {
        source: "api",
      },
    );
    expect(disabled.item.nextRunAt).toBeUndefined();
    expect((await ops.listSchedules(ctx)).map((s) => s.name)).toEqual(["s"]);
    expect(await ops.deleteSchedule(ctx, "s", "code")).toMatchObject({
      deleted: false,
      current: { name: "s" },
    });
    expect(await ops.deleteSchedule(ctx, "s", "api")).toEqual({ deleted: true });
    expect(await ops.deleteSchedule(ctx, "s", "api")).toEqual({ deleted: false, current: undefined });
    expect(await ops.getSchedule(ctx, "s")).toBeUndefined();
  });

  it("syncs declared schedules: created, unchanged, updated, deleted; API edits and API schedules survive", async () => {
    const { ctx } = await fresh();
    const a: ScheduleDeclaration = { name: "a", cron: "0 * * * *", kind: "echo" };
    const b: ScheduleDeclaration = { name: "b", cron: "0 0 * * *", kind: "echo" };
    await ops.putSchedule(ctx, "mine", input(ctx, { cron: "* * * * *", kind: "echo" }), { source: "api" });
    await ops.putSchedule(ctx, "taken", input(ctx, { cron: "* * * * *", kind: "echo" }), { source: "api" });
    const taken: ScheduleDeclaration = { name: "taken", cron: "0 * * * *", kind: "fail" };
    expect(await syncDeclaredSchedules(ctx, [a, b, taken], T0)).toEqual({
      created: 2,
      updated: 0,
      deleted: 0,
      unchanged: 0,
      skipped: 1,
    });
    // An operator disables "a" through the API: a sync with the same declarations leaves it so.
    await ops.putSchedule(ctx, "a", input(ctx, { cron: "0 * * * *", kind: "echo", enabled: false }), {
      source: "api",
    });
    expect(await syncDeclaredSchedules(ctx, [a, b], T0)).toMatchObject({
      unchanged: 2,
      updated: 0,
      deleted: 0,
    });
    expect(await ops.getSchedule(ctx, "a")).toMatchObject({ enabled: false, source: "code" });
    // The declaration of "a" changes (a deploy) and "b" is removed from code.
    const a2 = { ...a, cron: "30 * * * *" };
    expect(await syncDeclaredSchedules(ctx, [a2], T0)).toEqual({
      created: 0,
      updated: 1,
      deleted: 1,
      unchanged: 0,
      skipped: 0,
    });
    expect(await ops.getSchedule(ctx, "a")).toMatchObject({ enabled: true, cron: "30 * * * *" });
    const names = (await ops.listSchedules(ctx)).map((s) => `${s.name}:${s.source}`).sort();
    expect(names).toEqual(["a:code", "mine:api", "taken:api"]);
  });
});
