import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type PoolHarnessOptions, poolHarnessPerTest } from "../support/pool-harness.ts";
import {
  CRASH_LEASE_SECONDS,
  expectTakenOverOnce,
  TAKEOVER_BOUND_MS,
  takeoverMs,
} from "../support/takeover.ts";
import { waitFor } from "../support/wait.ts";
import { doomedPool } from "./doomed-pool.ts";

// A pool that dies with work in hand: a job it claimed before the first heartbeat, and a job that
// waits in its intake line for a child. The pool queue keeps a 930 s visibility timeout
// (900 s + its 20 s window + 10 s); the lease is 3 s. Another pool must finish every job within 2 × the lease of the crash.

let dir: string;
// Registered first, so it runs last (after-hooks unwind in reverse): once the pools have stopped.
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
const pools = poolHarnessPerTest();

/** The surviving pool (not started) and a marker path for scripted.mjs's "hang-once". */
async function setUp(spec: PoolHarnessOptions["spec"] = {}) {
  dir = mkdtempSync(join(tmpdir(), "pool-crash-"));
  const h = await pools.create({
    start: false,
    spec,
    queue: { leaseSeconds: CRASH_LEASE_SECONDS, workerTimeoutSeconds: 900 },
  });
  return { h, marker: join(dir, "hung") };
}

describe("a pool that dies with work in hand", () => {
  it("dies after a claim, before the first heartbeat: another pool finishes the job within 2 × the lease", async ({
    annotate,
  }) => {
    const { h, marker } = await setUp();
    const id = await h.enqueue({ act: "hang-once", marker });
    const doomed = doomedPool(pools.emulators(), h);
    await h.settled(id, "running");
    await waitFor(async () => existsSync(marker), "the child to get the job");
    const crashedAt = doomed.die();
    h.runner.start();
    const done = await h.settled(id, "done");
    await expectTakenOverOnce(done, crashedAt, h.metrics, annotate);
    // The next attempt's history names why the dead pool's run ended, and which pool ran it.
    expect(done.history).toEqual([
      expect.objectContaining({ a: 1, o: "lapsed", r: `pool:doomed/${process.pid}` }),
    ]);
    expect(done.history?.[0]?.x).toMatch(
      /^lease lapsed after \d+ s without an end \(the worker stopped: crash, out of memory or a frozen process\)$/,
    );
  });

  it("keeps a job waiting for a child hidden past the first hold, and after a crash both jobs come back in time", async ({
    annotate,
  }) => {
    // soft 1, hard 2: the pool takes the second job too (its probe), and it waits for the busy child.
    const { h, marker } = await setUp({ soft: 1, hard: 2 });
    const running = await h.enqueue({ act: "hang-once", marker });
    const waiting = await h.enqueue({ act: "ok" });
    const doomed = doomedPool(pools.emulators(), h);
    await h.settled(running, "running");
    // Held at receive, then again every third of the lease: well past the first hold's lease + 1 s,
    // a second consumer still finds nothing, and the waiting job was never claimed.
    await waitFor(
      async () => doomed.crash.sent("ChangeMessageVisibilityBatchCommand") >= 7,
      "the waiting job to be held again and again",
    );
    expect(await h.receiveRaw(10, 0)).toHaveLength(0);
    expect((await h.job(waiting)).status).toBe("queued");
    const crashedAt = doomed.die();
    h.runner.start();
    const done = await Promise.all([h.settled(running, "done"), h.settled(waiting, "done")]);
    const afters = done.map((d) => takeoverMs(d, crashedAt));
    await annotate(`taken over ${afters.join(", ")} ms after the crash (lease ${CRASH_LEASE_SECONDS} s)`);
    for (const after of afters) expect(after).toBeLessThanOrEqual(TAKEOVER_BOUND_MS);
    expect(done.map((d) => d.attempts)).toEqual([2, 1]);
    expect(h.metrics.total("succeeded")).toBe(2);
  }, 30_000);
});
