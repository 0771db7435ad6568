import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { tickingStackForFile } from "../support/stack-for-file.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The operations plane as the README shows it, through the stack `npm start` runs (local/stack.ts
 * over app/, started in this process) with the scheduled functions ticking every second: schedules,
 * pause/resume, long delays, a rate-limited kind.
 */
const stack = tickingStackForFile({ app, tickSeconds: 1 });

const { call, untilStatus } = stackHttp(() => stack().url);

async function jobsWithUniqueKeyPrefix(prefix: string): Promise<Json[]> {
  const found: Json[] = [];
  let cursor: string | undefined;
  do {
    const page = await call("GET", `/jobs?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    found.push(...page.body.items.filter((j: Json) => String(j.uniqueKey ?? "").startsWith(prefix)));
    cursor = page.body.cursor;
  } while (cursor);
  return found;
}

describe("operations on the local stack", () => {
  it("runs a schedule created with PUT /schedules/{name}, and stops after DELETE", async () => {
    const put = await call("PUT", "/schedules/every-2s", {
      cron: "*/2 * * * * *",
      timezone: "Europe/Berlin",
      kind: "echo",
      payload: { tick: true },
    });
    expect(put.status).toBe(201);
    expect(put.body).toMatchObject({
      name: "every-2s",
      cron: "*/2 * * * * *",
      enabled: true,
      misfire: "skip",
    });

    const listed = await call("GET", "/schedules");
    expect(listed.body.items.map((s: Json) => s.name)).toEqual(
      expect.arrayContaining(["every-2s", "heartbeat-echo"]),
    );

    const done = await waitFor(
      async () => {
        const jobs = await jobsWithUniqueKeyPrefix("cron:every-2s:");
        const finished = jobs.filter((j) => j.status === "done");
        return finished.length >= 2 ? finished : undefined;
      },
      "two fires of the schedule to be done",
      20_000,
    );
    for (const job of done) {
      expect(job.result).toEqual({ tick: true });
      // Fires are of even seconds of the cron, each with its own key naming its fire time (a tick
      // that runs late, on a loaded machine, enqueues the job to run now: its runAt may be odd).
      const fireTime = String(job.uniqueKey).slice("cron:every-2s:".length);
      expect(new Date(fireTime).getUTCSeconds() % 2).toBe(0);
    }
    expect(new Set(done.map((j) => j.uniqueKey)).size).toBe(done.length);

    expect((await call("DELETE", "/schedules/every-2s")).status).toBeLessThan(300);
    expect((await call("DELETE", "/schedules/heartbeat-echo")).status).toBe(409);
  });

  it("answers a bad cron or time zone with a 400 that names it", async () => {
    const badCron = await call("PUT", "/schedules/bad", { cron: "61 * * * *", kind: "echo" });
    expect(badCron.status).toBe(400);
    expect(badCron.body.error.message).toContain("61 * * * *");
    const badZone = await call("PUT", "/schedules/bad", {
      cron: "* * * * *",
      kind: "echo",
      timezone: "Mars/Base",
    });
    expect(badZone.status).toBe(400);
    expect(badZone.body.error.message).toContain("Mars/Base");
  });

  it("keeps jobs queued while the queue is paused and runs them after resume", async () => {
    const paused = await call("POST", "/queues/default/pause");
    expect(paused.status).toBe(200);
    expect(paused.body.paused).toBe(true);

    const created = await call("POST", "/jobs", { kind: "echo", payload: { n: 1 } });
    expect(created.status).toBe(201);
    // The message reaches SQS and stays there: visible, never received.
    await waitFor(
      async () => {
        const q = (await call("GET", "/queues")).body.items.find((x: Json) => x.name === "default");
        return q.counts.visible >= 1 ? q : undefined;
      },
      "the paused queue to show its message",
      10_000,
    );
    expect((await call("GET", `/jobs/${created.body.id}`)).body.status).toBe("queued");

    const resumed = await call("POST", "/queues/default/resume");
    expect(resumed.body.paused).toBe(false);
    const done = await untilStatus(created.body.id, "done");
    expect(done.attempts).toBe(1);
    const q = (await call("GET", "/queues")).body.items.find((x: Json) => x.name === "default");
    expect(q.counts.dlq).toBe(0);
  });

  it("stores a job 20 minutes out as scheduled, listed for operators", async () => {
    const created = await call("POST", "/jobs", { kind: "echo", payload: {}, delaySeconds: 1200 });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("scheduled");
    const listed = await call("GET", "/jobs?queue=default&status=scheduled");
    expect(listed.body.items.map((j: Json) => j.id)).toContain(created.body.id);
    // The reaper leaves it alone until it is due within SQS's 15 minutes: test/integration/reaper.test.ts
    // checks that with an injected clock, which this process can't advance.
  });

  it("runs more rate-limited jobs than the bucket holds, all to done", async () => {
    const batch = await call("POST", "/jobs/batch", {
      jobs: Array.from({ length: 8 }, (_, i) => ({ kind: "partner-call", payload: { orderId: `o-${i}` } })),
    });
    const ids = batch.body.results.map((r: Json) => r.id as string);
    for (const id of ids) {
      const job = await untilStatus(id, "done", 30_000);
      expect(job.result.orderId).toMatch(/^o-\d$/);
      // Throttles give the attempt back: every job finished on its first counted attempt.
      expect(job.attempts).toBe(1);
    }
  });
});
