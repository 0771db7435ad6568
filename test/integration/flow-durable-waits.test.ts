import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { WaitToken } from "../../lib/job/durable.ts";
import { flowKey } from "../../lib/job/flow-key.ts";
import { defineUnboundKind } from "../../lib/job/kind.ts";
import { readFlowKeyState } from "../../lib/store/flow-key-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { OffsetClock } from "../support/clock.ts";
import { type Harness, harnessPerTest, settled } from "../support/engine-harness.ts";
import { deferred, waitFor } from "../support/wait.ts";

/**
 * Durable waits free their place (docs/guide/flow-control.md, "Durable jobs and places"): a durable
 * job that waits for a token holds no place of its flow keys while it waits, so another job of the
 * key runs meanwhile; when the token completes it takes a place again, waiting in the key's line
 * while the key is full. On the real emulators; no wait on the clock: each step awaits its evidence.
 */
const order: string[] = [];
const Job = z.object({
  tenant: z.string(),
  name: z.string(),
  waits: z.boolean().default(false),
  holds: z.boolean().default(false),
});
/** Let go by the test: a job that `holds` keeps its place until then. */
let release = deferred();
const approvals = defineUnboundKind({
  name: "t-flow-approval",
  queue: "default",
  payload: Job,
  maxAttempts: 3,
  timeoutSeconds: 30,
  flow: [
    { name: "tenant", key: (p) => p.tenant, concurrency: 1 },
    { name: "region", key: () => "eu", concurrency: 2 },
  ],
  handler: async ({ name, waits, holds }, ctx) => {
    await ctx.step("before", async () => order.push(`${name} runs`));
    if (holds) await release.promise;
    if (waits) {
      const token = await ctx.createToken("approval", { timeoutSeconds: 600 });
      await ctx.waitForToken(token);
      await ctx.step("after", async () => order.push(`${name} resumes`));
    }
    return name;
  },
});
const harness = harnessPerTest();

async function tokenOf(h: Harness, jobId: string): Promise<{ id: string; secret: string }> {
  const item = await waitFor(async () => {
    const found = await getJob(h.engine.store, jobId);
    return found?.waiting?.for === "token" ? found : undefined;
  }, "the token wait");
  const token = JSON.parse(item.steps?.approval?.v ?? "") as WaitToken;
  return { id: token.id, secret: new URL(token.url, "http://x").searchParams.get("secret") ?? "" };
}

describe("durable waits and flow limits", () => {
  it("a job waiting for a token holds no place; on its completion it takes one again, in line behind a running job", async () => {
    release = deferred();
    const h = await harness.create({ clock: new OffsetClock(), extraKinds: [approvals] });
    h.startPoller();
    const enqueue = (name: string, options: { waits?: boolean; holds?: boolean } = {}) =>
      h.engine.producer.enqueue({ kind: "t-flow-approval", payload: { tenant: "acme", name, ...options } });
    const acme = flowKey("t-flow-approval", "acme");
    const a = await enqueue("a", { waits: true });
    const token = await tokenOf(h, a.job.id);
    // While a waits it holds no place in either limit (given back after its suspend's write, so
    // awaited): b of the same tenant (one place) runs.
    for (const fk of [acme, flowKey("t-flow-approval", "eu", "region")])
      await waitFor(
        async () => (await readFlowKeyState(h.engine.store, fk)).holders[a.job.id] === undefined,
        "a's places given back while it waits",
      );
    const b = await enqueue("b", { holds: true });
    await waitFor(async () => (await readFlowKeyState(h.engine.store, acme)).holders[b.job.id], "b's place");
    // a's token completes while b holds acme's place: a waits in acme's line, not beside b.
    await h.engine.durable.completeToken(token.id, token.secret, { ok: true });
    const parked = await waitFor(async () => {
      const item = await getJob(h.engine.store, a.job.id);
      return item?.parked ? item : undefined;
    }, "a to wait in acme's line");
    expect(parked.status).toBe("queued");
    expect(order).toEqual(["a runs", "b runs"]);
    // b ends: its place goes to a, which resumes.
    release.resolve();
    await settled(h, b.job.id, "done");
    await settled(h, a.job.id, "done");
    expect(order).toEqual(["a runs", "b runs", "a resumes"]);
    // a's place goes back after its finalize (the hand-over follows the done write): awaited, bounded.
    await waitFor(
      async () => Object.keys((await readFlowKeyState(h.engine.store, acme)).holders).length === 0,
      "a's place handed back once it is done",
    );
  });
});
