import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobTopic, readTokenClaims } from "../../lib/job/realtime-wire.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { stackHttp } from "../support/stack-http.ts";
import { withinMs } from "../support/wait.ts";

/**
 * The pool as the README shows it: `npm start` runs the pool (functions/pool/dev-main.ts, over app/) as a child process, and
 * heavy kinds enqueued over HTTP are done by warm children, one of them Python. An operator's
 * SKYFORGE_POOL_CONFIG file adds a kind and overrides a declared one without any TypeScript change.
 */
let stack: StackProcess;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "skyforge-pool-"));
  const config = join(dir, "pool.json");
  writeFileSync(
    config,
    JSON.stringify({
      kinds: {
        "py-digest": { soft: 1, hard: 1 },
        scripted: { argv: [process.execPath, "test/fixtures/children/scripted.mjs"], timeoutSeconds: 30 },
      },
    }),
  );
  stack = await startStackProcess({ SKYFORGE_POOL_CONFIG: config });
}, 90_000);
afterAll(async () => {
  await stack?.interrupt();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const { call, untilStatus } = stackHttp(() => stack.url);

describe("npm start: the pool", () => {
  it("runs a heavy kind on a warm Python child and reuses it", async () => {
    const ids: string[] = [];
    for (const text of ["a", "b", "c"]) {
      const res = await call("POST", "/jobs", { kind: "py-digest", payload: { text, rounds: 1000 } });
      expect(res.status).toBe(201);
      expect(res.body.queue).toBe("heavy");
      ids.push(res.body.id);
    }
    const jobs = await Promise.all(ids.map((id) => untilStatus(id, "done", 60_000)));
    for (const job of jobs) {
      expect(job.attempts).toBe(1);
      expect(job.result.runtime).toMatch(/^python 3\./);
      expect(job.result.rounds).toBe(1000);
      expect(job.result.sha256).toMatch(/^[0-9a-f]{64}$/);
    }
    // soft 1 / hard 1 from the config file: one warm child served all three.
    expect(new Set(jobs.map((j) => j.result.pid)).size).toBe(1);
  }, 90_000);

  it("serves a kind added by SKYFORGE_POOL_CONFIG, and maps a child's error to a retry", async () => {
    const ok = await call("POST", "/jobs", { kind: "scripted", payload: { echo: "hi" } });
    expect(ok.status).toBe(201);
    const done = await untilStatus(ok.body.id, "done", 60_000);
    expect(done.result).toMatchObject({ echo: "hi", attempt: 1 });

    const failing = await call("POST", "/jobs", {
      kind: "scripted",
      payload: { act: "error", message: "child says no" },
      maxAttempts: 1,
    });
    const dead = await untilStatus(failing.body.id, "dead", 60_000);
    expect(dead.lastError).toBe("child says no");
  }, 90_000);

  it("refuses a pool kind on a Lambda queue with a 400", async () => {
    const res = await call("POST", "/jobs", { kind: "py-digest", queue: "default", payload: {} });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/pool tier/);
  });

  it("pushes a pool job's status changes live: the pool publishes through the broker's publish path", async () => {
    // Delayed, so a raw subscription of the job's topic is in place before the pool claims it.
    const created = await call("POST", "/jobs", {
      kind: "py-digest",
      payload: { text: "live", rounds: 10 },
      delaySeconds: 2,
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const sub = await call("POST", `/jobs/${id}/subscriptions`, {});
    expect(sub.status).toBe(201);
    const prefix = readTokenClaims(sub.body.token)?.p as string;
    const client = mqtt.connect(sub.body.url, {
      clientId: "sf-pool-live",
      username: "token",
      password: sub.body.token,
      reconnectPeriod: 0,
    });
    try {
      const statuses: string[] = [];
      const done = new Promise<void>((resolve) =>
        client.on("message", (_topic, payload) => {
          const event = JSON.parse(payload.toString()) as { type: string; status?: string };
          if (event.type === "status" && event.status) statuses.push(event.status);
          if (event.status === "done") resolve();
        }),
      );
      await withinMs(client.subscribeAsync(jobTopic(prefix, id)), "the subscription", 10_000);
      // No replay is asked: only live messages arrive, each published by the pool's process.
      await withinMs(done, "the pool's live `done`", 60_000);
      expect(statuses).toEqual(["running", "done"]);
    } finally {
      client.end(true);
    }
  }, 90_000);
});
