import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import { ItemTooLarge } from "../../lib/errors.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { cancelJob } from "../../lib/ops/cancel-job.ts";
import { claimFitting } from "../../lib/runtime/oversized-ends.ts";
import type { StoreContext } from "../../lib/store/context.ts";
import { jobKey } from "../../lib/store/keys.ts";
import { claim } from "../../lib/store/lease-ops.ts";
import { OVERSIZED_NOTE } from "../../lib/store/oversized-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * A job whose item reaches DynamoDB's 400 KB limit ends, whatever write meets the limit: a step's
 * record (dead at once, naming the step), a takeover's claim (dead), a cancel (cancelled). Before,
 * every such write failed on every retry and the job stayed running for ever, a cancel included.
 */
const harness = harnessPerTest();

const release = deferred();
const kinds = [
  // Steps with names of 766 bytes (256 characters, most of 3 bytes) until the item is full: with
  // journal bounds far above the limit.
  defineUnboundKind({
    name: "t-fill",
    queue: "default",
    payload: z.object({ steps: z.number().int() }),
    maxAttempts: 3,
    backoff: { baseSeconds: 1, maxSeconds: 1 },
    timeoutSeconds: 300,
    handler: async ({ steps }, ctx) => {
      for (let i = 0; i < steps; i++) await ctx.step(`${i}-`.padEnd(256, "界"), () => i);
      return { steps };
    },
  }),
  defineUnboundKind({
    name: "t-hold",
    queue: "default",
    payload: z.object({}),
    maxAttempts: 3,
    timeoutSeconds: 300,
    handler: async () => {
      await release.promise;
      return {};
    },
  }),
];

/**
 * Grows the job's steps map (what makes a real item large) by one record's body until DynamoDB
 * refuses one more byte: the item is then at its limit.
 */
async function fillToTheLimit(store: StoreContext, id: string, slack = 0): Promise<void> {
  const pad = (bytes: number) =>
    store.doc.send(
      new UpdateCommand({
        TableName: store.table,
        Key: jobKey(id),
        UpdateExpression: "SET #steps = :steps",
        ExpressionAttributeNames: { "#steps": "steps" },
        ExpressionAttributeValues: { ":steps": { pad: { n: 1, a: 1, t: 0, v: "p".repeat(bytes) } } },
      }),
    );
  let fits = 0;
  let refused = 400 * 1024;
  while (refused - fits > 1) {
    const bytes = Math.floor((fits + refused) / 2);
    const ok = await pad(bytes).then(
      () => true,
      () => false,
    );
    if (ok) fits = bytes;
    else refused = bytes;
  }
  await pad(fits - slack);
}

describe("a job at DynamoDB's item size limit", () => {
  it("a step that would take the item past it ends the job dead on that attempt, naming the step", async () => {
    const journalLimits = { steps: 5_000, nameBytes: 8 * 1024 * 1024 };
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds, journalLimits });
    const { job } = await h.engine.producer.enqueue({ kind: "t-fill", payload: { steps: 20 } });
    // A few steps' room left (a record of a 766-byte name is about 800 bytes), then the run starts.
    await fillToTheLimit(h.engine.store, job.id, 4_000);
    h.startPoller();
    const dead = await settled(h, job.id, "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(
      /^step "\d+-界+" was not recorded: recordStep: the item would pass DynamoDB's 400 KB limit/,
    );
    // Its dead finalize (an error and a history record more) didn't fit either: the job ended with
    // its steps map dropped, which always fits, and says so.
    expect(dead.lastError).toContain(OVERSIZED_NOTE);
    expect(dead.steps).toBeUndefined();
  });

  it("a cancel of a running job whose item is full ends it cancelled; its run's finalize then finds it lost", async () => {
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: kinds });
    h.startPoller();
    const { job } = await h.engine.producer.enqueue({ kind: "t-hold", payload: {} });
    await settled(h, job.id, "running");
    await fillToTheLimit(h.engine.store, job.id);
    const cancelled = await cancelJob(h.engine, job.id);
    release.resolve();
    expect(cancelled.outcome).toBe("cancelled");
    const item = await getJob(h.engine.store, job.id);
    expect(item).toMatchObject({ status: "cancelled", cancelRequested: true });
    expect(item?.lastError).toMatch(/requestCancel: the item would pass DynamoDB's 400 KB limit/);
    expect(item?.leaseToken).toBeUndefined();
    // The run's end lost to the cancel: nothing overwrote it.
    await waitFor(async () => h.metrics.total("leaseLost") > 0 || undefined, "the run to see its job gone");
    expect((await getJob(h.engine.store, job.id))?.status).toBe("cancelled");
  }, 60_000);

  it("a takeover's claim of a full item ends the job dead instead of failing on every delivery", async () => {
    const clock = new OffsetClock();
    const h = await harness.create({ clock, extraKinds: kinds });
    const { job } = await h.engine.producer.enqueue({ kind: "t-hold", payload: {} });
    const stored = await getJob(h.engine.store, job.id);
    if (!stored) throw new Error("no item");
    const first = await claim(h.engine.store, stored, "first-run", 1_000);
    expect(first.claimed).toBe(true);
    await fillToTheLimit(h.engine.store, job.id);
    clock.advance(5_000);
    // The store's own takeover is refused for size...
    await expect(claim(h.engine.store, stored, "second-run", 30_000)).rejects.toBeInstanceOf(ItemTooLarge);
    // ...and the delivery's claim ends the job, which it then sees finished.
    const taken = await claimFitting(h.engine, stored, "second-run", 30_000, undefined, h.queue);
    expect(taken).toMatchObject({ claimed: false, current: { status: "dead" } });
    expect((await getJob(h.engine.store, job.id))?.lastError).toMatch(/claim:takeover: the item would pass/);
  });
});
