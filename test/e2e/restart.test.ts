import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROUTE_KEYS } from "../../lib/api/route-keys.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { dynamoClient } from "../../local/emulators.ts";
import { ManualClock } from "../support/clock.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { copyProject, type ProjectCopy } from "../support/project-copy.ts";
import { type Json, stackHttp } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * README "Local state": `npm start` keeps its table and queues in a data directory, so a stop by
 * SIGTERM or by SIGKILL loses nothing. Jobs queued or running when the stack died run after the
 * restart, each completing exactly once; schedules and queue settings are still there.
 *
 * The observer is the stack's own log (LOG_LEVEL=DEBUG: a success is a DEBUG line): the worker writes "job done" only after the
 * finalize write that made the job done has landed, so one such line per job is one completion.
 */
/**
 * The stack runs in a copy of the project whose default queue leases for 6 s, not app/queues.ts's
 * 30: after the SIGKILL a running job is taken over once its lease ends, which the test would
 * otherwise wait out in real time. Nothing else of the app changes.
 */
const LEASE_SECONDS = 6;
const LEASE_MS = LEASE_SECONDS * 1000;
/** A sleep job's run: it outlasts its first renewal (a third of the lease) by 10 s, so the kill finds it running. */
const SLEEP_MS = 12_000;
const dataDir = mkdtempSync(join(tmpdir(), "skyforge-restart-"));
const env = { SKYFORGE_DATA_DIR: dataDir, SKYFORGE_TICK_SECONDS: "1", LOG_LEVEL: "DEBUG" };
const outputs: string[] = [];
let stack: StackProcess | undefined;
let copy: ProjectCopy | undefined;

beforeAll(() => {
  copy = copyProject("skyforge-restart-copy-");
  const queuesPath = join(copy.dir, "app/queues.ts");
  const queues = readFileSync(queuesPath, "utf8");
  // The first queue declared is "default" (its lease is the first one written).
  const at = queues.indexOf('name: "default"');
  const lease = queues.indexOf("leaseSeconds: 30,", at);
  if (at < 0 || lease < 0 || queues.indexOf('name: "', at + 1) < lease)
    throw new Error(`${queuesPath}: no "leaseSeconds: 30," in queue "default"`);
  writeFileSync(
    queuesPath,
    `${queues.slice(0, lease)}leaseSeconds: ${LEASE_SECONDS},${queues.slice(lease + "leaseSeconds: 30,".length)}`,
  );
});

afterAll(async () => {
  await stack?.interrupt();
  rmSync(dataDir, { recursive: true, force: true });
  copy?.remove();
});

async function boot(): Promise<StackProcess> {
  stack = await startStackProcess(env, copy?.dir);
  return stack;
}

async function stop(signal: "SIGTERM" | "SIGKILL"): Promise<void> {
  const s = stack as StackProcess;
  await s.kill(signal);
  outputs.push(s.output());
  stack = undefined;
}

const { call } = stackHttp(() => (stack as StackProcess).url);

async function enqueue(body: Json): Promise<Json> {
  const res = await call("POST", "/jobs", body);
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body;
}

const statusOf = async (id: string) => (await call("GET", `/jobs/${id}`)).body;

async function allReach(ids: readonly string[], status: string, timeoutMs: number): Promise<Json[]> {
  return waitFor(
    async () => {
      const jobs = await Promise.all(ids.map(statusOf));
      return jobs.every((j) => j.status === status) ? jobs : undefined;
    },
    `${ids.length} jobs to be ${status}`,
    timeoutMs,
    250,
  );
}

/** The job items as the stack's dynalite holds them (the API doesn't show leases). */
function tableOf(s: StackProcess) {
  const endpoint = /DynamoDB\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(s.output())?.[1] as string;
  const client = dynamoClient(endpoint);
  const store = createStoreContext(client, "skyforge-jobs", new ManualClock());
  return { get: (id: string) => getJob(store, id), close: () => client.destroy() };
}

/** "job done" lines per job id, over every run of the stack so far. */
function completions(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of [...outputs, stack?.output() ?? ""].join("\n").split("\n")) {
    let entry: { message?: string; jobId?: string };
    try {
      entry = JSON.parse(line);
    } catch {
      continue; // the banner and anything else that is not a log entry
    }
    if (entry.message === "job done" && entry.jobId)
      counts.set(entry.jobId, (counts.get(entry.jobId) ?? 0) + 1);
  }
  return counts;
}

describe("npm start keeps its state across a restart", () => {
  it("lists exactly the served routes and where the data lives", async () => {
    const s = await boot();
    const banner = s.output();
    const block = banner.slice(banner.indexOf("HTTP API"), banner.indexOf("Lambda Invoke"));
    const listed = block
      .replace(/HTTP API\s+http:\/\/\S+/, "")
      .split(/[,\n]/)
      .map((r) => r.trim())
      .filter(Boolean);
    expect(listed).toEqual([...API_ROUTE_KEYS]);
    expect(banner).toMatch(new RegExp(`data\\s+${dataDir}`));
    expect(banner).toContain("--fresh");
  }, 90_000);

  const queuedAtTerm: string[] = [];
  let scheduledId = "";
  let uniqueId = "";

  it("after SIGTERM: jobs, schedules and queue settings are all there, and the queued jobs then run", async () => {
    expect(
      (await call("PUT", "/schedules/restart-probe", { cron: "0 0 1 1 *", kind: "echo", enabled: false }))
        .status,
    ).toBe(201);
    const patched = await call("PATCH", "/queues/default", {
      maxConcurrency: 50,
      backoff: { maxSeconds: 600 },
      retentionDays: { done: 3 },
    });
    expect(patched.status).toBe(200);
    expect((await call("POST", "/queues/default/pause")).status).toBe(200);
    for (let i = 0; i < 5; i++) queuedAtTerm.push((await enqueue({ kind: "echo", payload: { term: i } })).id);
    uniqueId = (await enqueue({ kind: "echo", payload: { unique: true }, uniqueKey: "restart-unique" })).id;
    scheduledId = (await enqueue({ kind: "echo", payload: { later: true }, delaySeconds: 1200 })).id;

    await stop("SIGTERM");
    await boot();

    for (const id of queuedAtTerm) expect(await statusOf(id)).toMatchObject({ id, status: "queued" });
    expect(await statusOf(scheduledId)).toMatchObject({ status: "scheduled" });
    const again = await call("POST", "/jobs", {
      kind: "echo",
      payload: { unique: true },
      uniqueKey: "restart-unique",
    });
    expect(again.body).toMatchObject({ id: uniqueId, duplicate: true });
    const schedules = (await call("GET", "/schedules")).body.items as Json[];
    expect(schedules.find((x) => x.name === "restart-probe")).toMatchObject({
      cron: "0 0 1 1 *",
      kind: "echo",
      enabled: false,
    });
    const queue = ((await call("GET", "/queues")).body.items as Json[]).find((q) => q.name === "default");
    expect(queue).toMatchObject({
      paused: true,
      maxConcurrency: 50,
      backoff: { maxSeconds: 600 },
      retentionDays: { done: 3 },
      // The poller starts as the recorded intent says: a paused queue is not received from.
      eventSource: { enabled: false, maxConcurrency: 50 },
    });

    expect((await call("POST", "/queues/default/resume")).status).toBe(200);
    for (const job of await allReach([...queuedAtTerm, uniqueId], "done", 20_000))
      expect(job).toMatchObject({ attempts: 1 });
  }, 120_000);

  it("after SIGKILL mid-run: running jobs are taken over once their lease ends, queued ones run, each completes once", async () => {
    const s = stack as StackProcess;
    const running: string[] = [];
    for (let i = 0; i < 4; i++)
      running.push((await enqueue({ kind: "sleep", payload: { ms: SLEEP_MS } })).id);
    // Each must have renewed its lease once (a third of the lease after its claim): from then on its
    // message is hidden for one lease only, so the restarted stack gets it back within a lease.
    const table = tableOf(s);
    try {
      await waitFor(
        async () => {
          const items = await Promise.all(running.map(table.get));
          return items.every(
            (j) => j?.status === "running" && (j.leaseUntil ?? 0) - (j.startedAt ?? 0) > LEASE_MS,
          );
        },
        "every sleep job to be running and to have heartbeated",
        25_000,
        100,
      );
    } finally {
      table.close();
    }
    expect((await call("POST", "/queues/default/pause")).status).toBe(200);
    const queuedAtKill: string[] = [];
    for (let i = 0; i < 5; i++) queuedAtKill.push((await enqueue({ kind: "echo", payload: { kill: i } })).id);

    await stop("SIGKILL");
    await boot();

    for (const id of running) expect(await statusOf(id)).toMatchObject({ status: "running", attempts: 1 });
    for (const id of queuedAtKill) expect(await statusOf(id)).toMatchObject({ status: "queued" });
    expect(await statusOf(scheduledId)).toMatchObject({ status: "scheduled" });
    const schedules = (await call("GET", "/schedules")).body.items as Json[];
    expect(schedules.map((x) => x.name)).toContain("restart-probe");
    const queue = ((await call("GET", "/queues")).body.items as Json[]).find((q) => q.name === "default");
    expect(queue).toMatchObject({ paused: true, maxConcurrency: 50, retentionDays: { done: 3 } });

    expect((await call("POST", "/queues/default/resume")).status).toBe(200);
    for (const job of await allReach(queuedAtKill, "done", 20_000))
      expect(job).toMatchObject({ attempts: 1 });
    // Lease end (≤ a lease after the kill) + a fresh run, with room for a loaded machine.
    for (const job of await allReach(running, "done", 90_000))
      expect(job).toMatchObject({ attempts: 2, result: { sleptMs: SLEEP_MS } });

    const done = completions();
    for (const id of [...queuedAtTerm, uniqueId, ...running, ...queuedAtKill])
      expect(done.get(id), id).toBe(1);
    expect(await statusOf(scheduledId)).toMatchObject({ status: "scheduled" });
  }, 180_000);
});
