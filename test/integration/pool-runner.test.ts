import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { loadJobView } from "../../lib/claims/job-bodies.ts";
import { retentionExpiry } from "../../lib/retention.ts";
import { cancel } from "../../lib/store/finalize-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getQueueState, setQueueConfig } from "../../lib/store/queue-state.ts";
import {
  alive,
  gone,
  type PoolHarness,
  poolHarnessPerTest,
  SCRIPTED_CHILD,
  watchChildren,
} from "../support/pool-harness.ts";
import { waitFor } from "../support/wait.ts";

// The PoolRunner end to end: fauxqs + dynalite, the shared RecordProcessor, and real child processes
// (test/fixtures/children/scripted.mjs, told by each payload how to behave). Time is the system's:
// children really run, so every wait below polls a state with a bound, never sleeps for it.

const pool = poolHarnessPerTest();

/** Runs one ok job to completion and returns the pid of the child that served it. */
async function warmPid(h: PoolHarness): Promise<number> {
  const done = await h.settled(await h.enqueue({ act: "ok" }), "done");
  return h.resultOf(done).pid;
}

const at = (item: JobItem, field: "startedAt" | "finishedAt"): number => {
  const value = item[field];
  if (value === undefined) throw new Error(`job ${item.id} has no ${field}`);
  return value;
};

describe("PoolRunner: outcomes of a child's reply", () => {
  it("an ok reply finishes the job with the child's result, and the child stays warm", async () => {
    const h = await pool.create();
    const id = await h.enqueue({ act: "ok", echo: "hi" });
    const done = await h.settled(id, "done");
    expect(done.attempts).toBe(1);
    const result = h.resultOf(done);
    expect(result).toEqual({ pid: expect.any(Number), attempt: 1, echo: "hi" });
    expect(result.pid).not.toBe(process.pid);
    // Back among its kind's children, idle and alive, for the next job.
    await waitFor(async () => h.children().idle === 1, "the child to be idle again");
    expect(alive(result.pid)).toBe(true);
    expect(h.metrics.total("poolDispatched")).toBe(1);
    expect(h.metrics.total("succeeded")).toBe(1);
  });

  it("a payload and a result over 8 KiB go through the claims bucket: the child sees and answers them whole", async () => {
    const h = await pool.create();
    const echo = "é".repeat(300_000);
    const id = await h.enqueue({ act: "ok", echo });
    const done = await h.settled(id, "done");
    expect(done.payloadObject).toMatch(/^claims\/\d+d\/.+\/payload$/);
    expect(done.resultObject).toMatch(/^claims\/\d+d\/.+\/result-1$/);
    expect(done.result).toBeUndefined();
    const view = await loadJobView(h.engine.store, h.engine.claims, done);
    expect(view.result).toMatchObject({ attempt: 1, echo });
  });

  it("an error reply is retried with backoff, then the job dies with the child's message", async () => {
    const h = await pool.create();
    const id = await h.enqueue({ act: "error", message: "disk on fire" }, { maxAttempts: 2 });
    const dead = await h.settled(id, "dead");
    expect(dead.attempts).toBe(2);
    expect(dead.lastError).toBe("disk on fire");
    expect(h.metrics.total("retried")).toBe(1);
    expect(h.metrics.total("dead")).toBe(1);
    expect(h.metrics.total("poolDispatched")).toBe(2);
    // A protocol-conforming error reply doesn't cost the child: both attempts ran on the same one.
    h.runner.flushMetrics();
    expect(h.metrics.total("childRespawns")).toBe(0);
    expect(h.children().total).toBe(1);
  });

  it("a throttled reply cools the queue down and gives the attempt back", async () => {
    const h = await pool.create();
    const before = Date.now();
    // maxAttempts 1: had the first throttle spent the attempt, the second delivery would find none
    // left and the job would die without reaching the child.
    const id = await h.enqueue({ act: "throttle", secs: 1 }, { maxAttempts: 1 });
    await waitFor(async () => h.metrics.total("throttled") >= 2, "the job to come back and throttle again");
    const queued = await waitFor(async () => {
      const item = await h.job(id);
      return item.status === "queued" ? item : undefined;
    }, "the throttled job to be queued");
    expect(queued.attempts).toBe(0);
    expect(queued.lastError).toBeUndefined();
    expect(h.metrics.total("dead")).toBe(0);
    expect(h.metrics.total("retried")).toBe(0);
    const state = await getQueueState(h.engine.store, h.queue.name);
    expect(state.cooldownUntil).toBeGreaterThanOrEqual(before + 1000);
  });
});

describe("PoolRunner: a child that breaks the protocol is killed", () => {
  it.each([
    { act: "wrong-id", detail: /^child out of sync: reply for job "not-/ },
    { act: "garbage", detail: /^child out of sync: unparseable reply "this is not json"/ },
  ])("$act: the attempt fails as a desync and the next job runs on a new child", async ({ act, detail }) => {
    const h = await pool.create();
    const first = await warmPid(h);
    const bad = await h.enqueue({ act }, { maxAttempts: 1 });
    const next = await h.enqueue({ act: "ok" });
    const dead = await h.settled(bad, "dead");
    expect(dead.attempts).toBe(1);
    expect(dead.lastError).toMatch(detail);
    expect(h.metrics.total("childDesyncs")).toBe(1);
    await gone(first, `the desynced child ${first} to be killed`);
    const after = h.resultOf(await h.settled(next, "done"));
    expect(after.pid).not.toBe(first);
    expect(after.attempt).toBe(1);
  });

  it("a killed child is never handed the next job, even while a grandchild keeps its stdout open", async () => {
    // The background sleep holds the pipe, so the kill is reported late; the next job must not wait for it.
    const h = await pool.create({
      spec: { argv: ["sh", "-c", `sleep 2 & exec "${process.execPath}" "${SCRIPTED_CHILD}"`] },
    });
    await warmPid(h);
    const bad = await h.enqueue({ act: "garbage" }, { maxAttempts: 1 });
    await h.settled(bad, "dead");
    await h.settled(await h.enqueue({ act: "ok" }), "done");
    expect(h.log.matching(/died mid-job/)).toHaveLength(0);
  });

  it("a line nobody asked for kills the child, though the job it answered stays done", async () => {
    const h = await pool.create();
    const id = await h.enqueue({ act: "extra-line" });
    const done = await h.settled(id, "done");
    const talker = h.resultOf(done).pid;
    await gone(talker, `the chatty child ${talker} to be killed`);
    expect(h.log.matching(/line nobody asked for/)).toHaveLength(1);
    const after = h.resultOf(await h.settled(await h.enqueue({ act: "ok" }), "done"));
    expect(after.pid).not.toBe(talker);
    expect(h.metrics.total("succeeded")).toBe(2);
  });

  it("a child that doesn't answer within the kind's timeout is killed and the attempt fails", async () => {
    const h = await pool.create({ spec: { timeoutSeconds: 1 } });
    const first = await warmPid(h);
    const id = await h.enqueue({ act: "hang" }, { maxAttempts: 1 });
    const dead = await h.settled(id, "dead");
    expect(dead.lastError).toBe("timed out after 1s");
    expect(at(dead, "finishedAt") - at(dead, "startedAt")).toBeGreaterThanOrEqual(900);
    await waitFor(async () => h.metrics.total("childTimeouts") === 1, "childTimeouts to be counted");
    await gone(first, `the hung child ${first} to be killed`);
    const after = h.resultOf(await h.settled(await h.enqueue({ act: "ok" }), "done"));
    expect(after.pid).not.toBe(first);
  });

  it("a cancel of the running job reaches it through the heartbeat and kills its child", async () => {
    // Lease 2 s: a heartbeat every ~670 ms picks the cancel request up.
    const h = await pool.create({ queue: { leaseSeconds: 2 } });
    const first = await warmPid(h);
    const id = await h.enqueue({ act: "hang" });
    await h.settled(id, "running");
    const { item: requested } = await cancel(h.engine.store, id, retentionExpiry(Date.now(), 1));
    expect(requested).toMatchObject({ status: "running", cancelRequested: true });
    const cancelled = await h.settled(id, "cancelled");
    expect(cancelled.attempts).toBe(1);
    expect(cancelled.lastError).toBe("cancelled on request");
    expect(h.metrics.total("cancelled")).toBe(1);
    await gone(first, `the cancelled job's child ${first} to be killed`);
    const after = h.resultOf(await h.settled(await h.enqueue({ act: "ok" }), "done"));
    expect(after.pid).not.toBe(first);
  });
});

describe("PoolRunner: children per kind", () => {
  it("reuses one warm child for job after job (soft 1, hard 1)", async () => {
    const h = await pool.create({ spec: { soft: 1, hard: 1 } });
    const watch = watchChildren(h);
    try {
      const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => h.enqueue({ act: "ok", echo: i })));
      const done = await Promise.all(ids.map((id) => h.settled(id, "done")));
      const results = done.map((d) => h.resultOf(d));
      expect(results.map((r) => r.echo)).toEqual(ids.map((_, i) => i));
      expect(new Set(results.map((r) => r.pid)).size).toBe(1);
      expect(done.every((d) => d.attempts === 1)).toBe(true);
      expect(watch.maxTotal).toBe(1);
      h.runner.flushMetrics();
      expect(h.metrics.total("childRespawns")).toBe(0);
      expect(h.metrics.total("poolDispatched")).toBe(10);
    } finally {
      watch.stop();
    }
  });

  it("ordinary work stays within soft; critical work gets a child up to hard, culled afterwards", async () => {
    const h = await pool.create({ spec: { soft: 1, hard: 2 } });
    const watch = watchChildren(h);
    try {
      // Normal work: room for two messages, but one child only; the second job waits for it.
      const sleeper = await h.enqueue({ act: "sleep", ms: 1500 });
      await h.settled(sleeper, "running");
      const second = await h.enqueue({ act: "ok" });
      const sleeperDone = await h.settled(sleeper, "done");
      const secondDone = await h.settled(second, "done");
      expect(watch.maxBusy).toBe(1);
      expect(watch.maxTotal).toBe(1);
      expect(at(secondDone, "startedAt")).toBeGreaterThanOrEqual(at(sleeperDone, "finishedAt"));
      expect(h.resultOf(secondDone).pid).toBe(h.resultOf(sleeperDone).pid);

      // Critical work while the only soft child is busy: a second child, up to hard.
      watch.reset();
      const slow = await h.enqueue({ act: "sleep", ms: 3000 });
      await h.settled(slow, "running");
      const critical = await h.enqueue({ act: "sleep", ms: 300 }, { priority: "critical" });
      const criticalDone = await h.settled(critical, "done");
      // Released above soft with no critical work waiting: culled while the slow job still runs.
      await waitFor(async () => h.children().total === 1, "the extra child to be culled");
      expect(h.children().busy).toBe(1);
      expect((await h.job(slow)).status).toBe("running");
      const extra = h.resultOf(criticalDone).pid;
      await gone(extra, `the culled child ${extra} to exit`);
      const slowDone = await h.settled(slow, "done");
      expect(watch.maxBusy).toBe(2);
      expect(watch.maxTotal).toBe(2);
      expect(at(criticalDone, "finishedAt")).toBeLessThan(at(slowDone, "finishedAt"));
      expect(h.resultOf(slowDone).pid).not.toBe(extra);
      expect(alive(h.resultOf(slowDone).pid)).toBe(true);
      // A cull is planned, not a death: nothing to respawn.
      h.runner.flushMetrics();
      expect(h.metrics.total("childRespawns")).toBe(0);
    } finally {
      watch.stop();
    }
  });
});

describe("PoolRunner: children that die", () => {
  it("a child that dies mid-job gets the job rerun on a fresh child first, within the same attempt", async () => {
    // soft 1, hard 2: the second job is received and waits in line while the first one's child dies,
    // so "first" is decided by the pool, not by how many messages it may hold.
    const h = await pool.create({ spec: { soft: 1, hard: 2 } });
    const dir = mkdtempSync(join(tmpdir(), "pool-rip-"));
    try {
      const marker = join(dir, "crashed");
      const a = await h.enqueue({ act: "crash-once", marker });
      const b = await h.enqueue({ act: "ok" });
      const aDone = await h.settled(a, "done");
      const bDone = await h.settled(b, "done");
      const crashed = Number(readFileSync(marker, "utf8"));
      expect(aDone.attempts).toBe(1);
      expect(aDone.lastError).toBeUndefined();
      expect(h.resultOf(aDone)).toMatchObject({ attempt: 1 });
      expect(h.resultOf(aDone).pid).not.toBe(crashed);
      expect(alive(crashed)).toBe(false);
      expect(at(aDone, "finishedAt")).toBeLessThanOrEqual(at(bDone, "startedAt"));
      expect(h.log.matching(/died mid-job/)).toHaveLength(1);
      expect(h.metrics.total("retried")).toBe(0);
      h.runner.flushMetrics();
      expect(h.metrics.total("childRespawns")).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("survives every child being killed at once: all jobs finish, the pool keeps serving", async () => {
    const h = await pool.create({ spec: { soft: 3, hard: 3 } });
    // Warm up three children at once and learn their pids.
    const warmIds = await Promise.all([0, 1, 2].map(() => h.enqueue({ act: "sleep", ms: 1000 })));
    const warm = (await Promise.all(warmIds.map((id) => h.settled(id, "done")))).map(
      (d) => h.resultOf(d).pid,
    );
    expect(new Set(warm).size).toBe(3);
    await waitFor(async () => h.children().idle === 3, "the three children to be idle");

    const ids = await Promise.all(Array.from({ length: 9 }, () => h.enqueue({ act: "sleep", ms: 800 })));
    await waitFor(async () => h.children().busy === 3, "all three children to be busy", 20_000, 10);
    for (const pid of warm) process.kill(pid, "SIGKILL");

    const done = await Promise.all(ids.map((id) => h.settled(id, "done")));
    for (const d of done) {
      expect(d.attempts).toBe(1);
      expect(warm).not.toContain(h.resultOf(d).pid);
    }
    for (const pid of warm) expect(alive(pid)).toBe(false);
    const later = h.resultOf(await h.settled(await h.enqueue({ act: "ok" }), "done"));
    expect(warm).not.toContain(later.pid);
    expect(h.metrics.total("dead") + h.metrics.total("retried")).toBe(0);
    h.runner.flushMetrics();
    expect(h.metrics.total("childRespawns")).toBe(3);
    expect(h.children().total).toBeLessThanOrEqual(3);
  });
});

describe("PoolRunner: drain at shutdown", () => {
  it("lets a job that finishes inside the deadline finish", async () => {
    const h = await pool.create();
    const id = await h.enqueue({ act: "sleep", ms: 500 });
    await h.settled(id, "running");
    const report = await h.stop(3000);
    expect(report).toEqual({ finished: 1, handedBack: 0, returned: 0 });
    const done = await h.job(id);
    expect(done.status).toBe("done");
    expect(h.children().total).toBe(0);
    await gone(h.resultOf(done).pid, "the child to exit at shutdown");
  });

  it("hands back a job that can't finish in time and returns the ones still waiting", async () => {
    // soft 1, hard 2: the queue may hold two messages, but the second waits for the only child.
    const h = await pool.create({ spec: { soft: 1, hard: 2 } });
    const first = await warmPid(h);
    const hung = await h.enqueue({ act: "hang" });
    await h.settled(hung, "running");
    const waiting = await h.enqueue({ act: "ok" });
    await waitFor(async () => {
      const depth = await h.engine.transport.depth(h.queue.name);
      return depth.visible === 0 && depth.inFlight === 2;
    }, "the pool to hold the waiting message");
    expect((await h.job(waiting)).status).toBe("queued");

    const t0 = Date.now();
    const report = await h.stop(500);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(report).toEqual({ finished: 0, handedBack: 1, returned: 1 });
    const back = await h.job(hung);
    expect(back).toMatchObject({ status: "queued", attempts: 0 });
    expect(back.leaseToken).toBeUndefined();
    expect(await h.job(waiting)).toMatchObject({ status: "queued", attempts: 0 });
    expect(h.metrics.total("released")).toBe(1);
    await gone(first, "the hung child to be killed");
    expect(h.children().total).toBe(0);

    // Both messages are visible again at once: another consumer gets them without waiting.
    const ids = new Set<string>();
    await waitFor(
      async () => {
        for (const m of await h.receiveRaw(10, 0)) ids.add(JSON.parse(m.Body ?? "{}").id);
        return ids.size >= 2;
      },
      "both messages to be visible",
      2000,
    );
    expect([...ids].sort()).toEqual([hung, waiting].sort());
  });
});

describe("PoolRunner: a paused queue", () => {
  it("receives nothing while paused, then runs the job once after resume", async () => {
    const h = await pool.create({ start: false });
    await setQueueConfig(h.engine.store, h.queue.name, { paused: true });
    const id = await h.enqueue({ act: "ok" });
    const sends = vi.spyOn(h.engine.store.doc, "send");
    const pauseChecks = () =>
      sends.mock.calls.filter(([command]) =>
        (command.input as { Key?: { pk?: string } }).Key?.pk?.startsWith("queue#"),
      ).length;
    h.runner.start();
    // Three pause checks in a row means three loop turns without a receive.
    await waitFor(async () => pauseChecks() >= 3, "the pool to check the pause three times");
    expect((await h.job(id)).status).toBe("queued");
    const depth = await h.engine.transport.depth(h.queue.name);
    expect(depth).toMatchObject({ visible: 1, inFlight: 0 });

    await setQueueConfig(h.engine.store, h.queue.name, { paused: false });
    const done = await h.settled(id, "done");
    expect(done.attempts).toBe(1);
    expect(h.metrics.total("duplicateDeliveries")).toBe(0);
  });
});
