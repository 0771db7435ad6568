import { describe, expect, it } from "vitest";
import * as z from "zod";
import { systemClock } from "../../lib/clock.ts";
import { lambdaRunStamp } from "../../lib/handlers/worker.ts";
import { createWorker } from "../../lib/runtime/worker.ts";
import { toJobView } from "../../lib/store/job-item.ts";
import type { RunStamp } from "../../lib/store/lease-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { harnessPerTest, settled } from "../support/engine-harness.ts";
import { CRASH_LEASE_SECONDS } from "../support/takeover.ts";
import { kindOnDefaultQueue } from "../support/test-kinds.ts";
import { waitFor } from "../support/wait.ts";
import { type CrashSwitch, doomedEngine } from "./crash-switch.ts";

// A reason for every killed run (docs/architecture.md §21): a worker dies mid-run, another takes the
// job over once the lease lapses, and the job's history names why the first attempt ended. The lease
// is 3 s on the real clock (SQS's visibility in the emulator runs on it); every wait is bounded.

const harness = harnessPerTest();

let crash: CrashSwitch | undefined;
let started = 0;
const stalls = kindOnDefaultQueue(
  "stalls",
  { maxAttempts: 3, timeoutSeconds: 600, payload: z.object({ n: z.number() }) },
  async ({ n }) => {
    started++;
    if (!crash?.tripped) await new Promise(() => {});
    return { n };
  },
);

/** One job, received as a worker's batch and handed to a doomed worker stamped by `runner`. */
async function runDoomed(runner: () => RunStamp) {
  crash = undefined;
  started = 0;
  const h = await harness.create({
    clock: systemClock,
    queue: { leaseSeconds: CRASH_LEASE_SECONDS },
    extraKinds: [stalls],
  });
  const { job } = await h.engine.producer.enqueue({ kind: "stalls", payload: { n: 1 } });
  const event = await h.receive(1, 2);
  const doomed = doomedEngine(
    harness.emulators(),
    h.engine,
    { name: h.queue.name, url: h.urls.url },
    { runner },
  );
  crash = doomed.crash;
  void createWorker(doomed.engine, { recordConcurrency: 1 })(event);
  await waitFor(async () => started === 1, "the handler to start");
  return { h, id: job.id, switch: doomed.crash };
}

describe("the next attempt's history names why the last one ended", () => {
  it("a Lambda worker killed by its timeout: lapsed, a timeout, its function and request id", async () => {
    // Lambda's context: 4 s left when the claim first asks (the heartbeats keep the lease past
    // that), counted from then: a loaded machine's slow start doesn't eat into it.
    const remainingMs = 4000;
    let firstAsked: number | undefined;
    const context = {
      awsRequestId: "5b1c7e9a-req",
      getRemainingTimeInMillis: () => {
        firstAsked ??= Date.now();
        return remainingMs - (Date.now() - firstAsked);
      },
    };
    const {
      h,
      id,
      switch: killed,
    } = await runDoomed(() => lambdaRunStamp("skyforge-test-worker", context, Date.now()));
    const running = await settled(h, id, "running");
    expect(running.runner).toBe("lambda:skyforge-test-worker/5b1c7e9a-req");
    const deadline = running.runDeadline as number;
    expect(deadline - (running.startedAt as number)).toBeGreaterThan(3000);
    // Its heartbeats carry the lease past the invocation's deadline, where Lambda stops it mid-run:
    // no finalize, no more heartbeats.
    await waitFor(async () => {
      const now = await getJob(h.engine.store, id);
      return (now?.leaseUntil ?? 0) >= deadline;
    }, "a heartbeat to renew the lease past the deadline");
    killed.trip();
    h.startPoller();
    const done = await settled(h, id, "done");
    const history = toJobView(done).history;
    expect(history?.map((a) => a.outcome)).toEqual(["lapsed", "done"]);
    expect(history?.[0]).toMatchObject({ attempt: 1, runner: "lambda:skyforge-test-worker/5b1c7e9a-req" });
    expect(history?.[0]?.error).toMatch(
      /^timeout: lease lapsed after \d+ s without an end \(the worker reached its time limit, 4 s after the start\)$/,
    );
  }, 30_000);

  it("a worker killed mid-run locally: lapsed after the lease, crash, out of memory or a frozen process", async () => {
    const { h, id, switch: killed } = await runDoomed(() => ({ runner: `local:${process.pid}` }));
    killed.trip();
    h.startPoller();
    const done = await settled(h, id, "done");
    const history = toJobView(done).history;
    expect(history?.map((a) => [a.attempt, a.outcome, a.runner])).toEqual([
      [1, "lapsed", `local:${process.pid}`],
      [2, "done", undefined],
    ]);
    expect(history?.[0]?.error).toMatch(
      /^lease lapsed after \d+ s without an end \(the worker stopped: crash, out of memory or a frozen process\)$/,
    );
    expect(done).toMatchObject({ claimedFrom: "running", attempts: 2 });
  }, 30_000);
});
