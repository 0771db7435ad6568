import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Log } from "../../lib/observability/log.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { type PoolProcess, type PoolProcessOptions, startPoolProcess } from "../../local/pool-process.ts";
import { isRunning } from "../../local/process-running.ts";
import {
  type PoolProcessStage,
  poolOutputLog,
  poolProcessStage,
  refusal,
} from "../support/pool-process-stage.ts";
import { emulatorsForFile } from "../support/test-emulators.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The pool's real entry point (functions/pool/main.ts) in its own process, stopped with SIGTERM the
 * way ECS stops a task: the job that can finish inside the drain deadline finishes, the one that
 * can't is handed back (attempt returned, message visible at once), and the process exits 0.
 */
const emulators = emulatorsForFile();
let stage: PoolProcessStage;
let engine: Engine;
let poolEnv: Record<string, string | undefined>;
let dir: string;

beforeAll(async () => {
  const configText = JSON.stringify({
    kinds: {
      scripted: { argv: [process.execPath, "test/fixtures/children/scripted.mjs"], soft: 2, hard: 2 },
    },
  });
  dir = mkdtempSync(join(tmpdir(), "skyforge-pool-"));
  // The pool runs its children as users of their own (root here): they write their marker and
  // journal here, so anyone may.
  chmodSync(dir, 0o777);
  const config = join(dir, "pool.json");
  writeFileSync(config, configText);
  poolEnv = { ...process.env, SKYFORGE_POOL_CONFIG: config };
  stage = await poolProcessStage(emulators(), "pool-process", configText);
  engine = stage.engine;
}, 60_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  stage?.destroy();
});

/** The pool process on this file's emulators; `env` is laid over the environment with the pool file. */
function startPool(log: Log, env: Record<string, string> = {}, over: Partial<PoolProcessOptions> = {}) {
  return startPoolProcess({
    command: [process.execPath, "--import", "tsx", "functions/pool/main.ts"],
    baseEnv: { ...poolEnv, ...env },
    ...stage.target,
    drainSeconds: 3,
    waitSeconds: 1,
    log,
    ...over,
  });
}

/**
 * Whether `pid` still runs. A signal 0 alone can't tell: a child whose pool died is re-parented to
 * PID 1, and an init that doesn't reap (this sandbox's doesn't) keeps it as a zombie, a process that
 * has ended but still answers signal 0. So a zombie counts as gone.
 */

describe("the pool process", () => {
  it("on SIGTERM finishes what it can before the deadline, hands the rest back, and exits 0", async () => {
    const { lines, log } = poolOutputLog();
    const pool = startPool(log);
    const quick = await engine.producer.enqueue({ kind: "scripted", payload: { act: "sleep", ms: 1500 } });
    const stuck = await engine.producer.enqueue({ kind: "scripted", payload: { act: "hang" } });
    const running = (id: string) => async () => (await getJob(engine.store, id))?.status === "running";
    await waitFor(running(quick.job.id), "the quick job to run", 30_000);
    await waitFor(running(stuck.job.id), "the stuck job to run", 30_000);

    const code = await pool.stop();
    expect(code).toBe(0);
    // A deliberate stop is not a death: nothing restarts it.
    expect(pool.restarts).toBe(0);
    expect(lines.some((l) => l.includes("restarting"))).toBe(false);

    const finished = await getJob(engine.store, quick.job.id);
    expect(finished).toMatchObject({ status: "done", attempts: 1 });
    const handedBack = await getJob(engine.store, stuck.job.id);
    expect(handedBack).toMatchObject({ status: "queued", attempts: 0 });
    expect(handedBack?.leaseToken).toBeUndefined();
    // Visible again at once: the next task would receive it without waiting out any visibility.
    const again = await engine.transport.receive("heavy", 10, 0);
    expect(again.map((m) => JSON.parse(m.Body ?? "{}").id)).toEqual([stuck.job.id]);
    expect(lines.some((l) => l.includes('"pool stopped"') && l.includes('"handedBack":1'))).toBe(true);
    expect(lines.some((l) => l.includes("scripted") && l.includes("child stderr"))).toBe(true);
  }, 60_000);

  it("SIGKILLed mid-job: its children die within a second, it is restarted, and the job is finished exactly once", async ({
    annotate,
  }) => {
    const { lines, log } = poolOutputLog();
    const pool: PoolProcess = startPool(log);
    const journal = join(dir, "journal");
    const marker = join(dir, "hung");
    // The children after the restart are other users than the first: all of them append to it.
    writeFileSync(journal, "");
    chmodSync(journal, 0o666);
    const { job } = await engine.producer.enqueue({
      kind: "scripted",
      payload: { act: "hang-once", marker, journal },
    });
    const runs = () =>
      (existsSync(journal) ? readFileSync(journal, "utf8").trim().split("\n").filter(Boolean) : []).map(
        (line) => {
          const [event, id, attempt, pid, at] = line.split(" ");
          return { event, id, attempt: Number(attempt), pid: Number(pid), at: Number(at) };
        },
      );
    const first = await waitFor(async () => runs()[0], "the job to start on a child", 30_000);
    expect((await getJob(engine.store, job.id))?.status).toBe("running");

    const killed = pool.pid as number;
    process.kill(killed, "SIGKILL");
    const killedAt = Date.now();
    await waitFor(async () => !isRunning(first.pid), `the child ${first.pid} to die with its pool`, 1000, 10);
    const childGoneMs = Date.now() - killedAt;
    expect(childGoneMs).toBeLessThanOrEqual(1000);

    // Supervised: back after the first backoff step, as a new process.
    await waitFor(async () => pool.restarts === 1 && pool.pid !== killed, "the pool to be restarted", 10_000);
    expect(isRunning(killed)).toBe(false);
    expect(lines.some((l) => l.includes("pool process died; restarting it"))).toBe(true);

    // The restarted pool takes the job over once the dead pool's hold and lease have run out.
    const done = await waitFor(
      async () => {
        const item = await getJob(engine.store, job.id);
        return item?.status === "done" ? item : undefined;
      },
      "the restarted pool to finish the job",
      70_000,
      100,
    );
    const takeoverMs = (done.startedAt ?? Number.NaN) - killedAt;
    await annotate(
      `children gone ${childGoneMs} ms after the pool's SIGKILL; taken over ${takeoverMs} ms after it (lease 30 s)`,
    );
    expect(done).toMatchObject({ attempts: 2, claimedFrom: "running" });
    expect(takeoverMs).toBeLessThanOrEqual(2 * 30_000);
    // The outside record: two starts, one end, and the second run began after the first child died.
    const record = runs().filter((r) => r.id === job.id);
    expect(record.map((r) => r.event)).toEqual(["start", "start", "end"]);
    expect(record[1]?.pid).not.toBe(first.pid);
    expect(record[1]?.at).toBeGreaterThan(killedAt);
    expect(record[2]).toMatchObject({ pid: record[1]?.pid, attempt: 2 });

    expect(await pool.stop()).toBe(0);
    expect(pool.restarts).toBe(1);
  }, 120_000);

  it("refuses a kind whose program doesn't exist, naming both: its jobs wait queued, the other kinds run", async () => {
    const text = JSON.stringify({
      kinds: {
        scripted: { argv: [process.execPath, "test/fixtures/children/scripted.mjs"] },
        "rb-size": { argv: ["skyforge-no-such-program", "children/size.rb"] },
      },
    });
    const config = join(dir, "missing-program.json");
    writeFileSync(config, text);
    const withRuby = stage.engineFor(text);
    const { lines, log } = poolOutputLog();
    const pool = startPool(log, { SKYFORGE_POOL_CONFIG: config });
    const ruby = await withRuby.producer.enqueue({ kind: "rb-size", payload: { text: "x" } });
    const other = await withRuby.producer.enqueue({ kind: "scripted", payload: { echo: "still served" } });
    await waitFor(
      async () =>
        lines.some((l) => l.includes("deferred a job of a refused kind") && l.includes(ruby.job.id)),
      "the refused kind's job to be deferred",
      30_000,
    );
    const refusal = lines.find((l) => l.includes("the pool refuses the kind")) ?? "";
    expect(refusal).toContain(
      'pool kind \\"rb-size\\": its program \\"skyforge-no-such-program\\" was not found on PATH',
    );
    // Not dead after its attempts: untouched, queued, for a pool that can run it.
    expect(await getJob(engine.store, ruby.job.id)).toMatchObject({ status: "queued", attempts: 0 });
    await waitFor(
      async () => (await getJob(engine.store, other.job.id))?.status === "done",
      "the other kind's job to run",
      30_000,
    );
    expect(await pool.stop()).toBe(0);
    expect(pool.restarts).toBe(0);
  }, 60_000);

  it("exits 78 on a pool file it can't use, and the supervisor doesn't restart it", async () => {
    const config = join(dir, "bad.json");
    writeFileSync(config, JSON.stringify({ kinds: { broken: { soft: "two" } } }));
    const { lines, log } = poolOutputLog();
    const pool = startPool(log, { SKYFORGE_POOL_CONFIG: config });
    const refused = await refusal(lines, "the pool to refuse its file");
    expect(await pool.stop()).toBe(78);
    expect(pool.restarts).toBe(0);
    expect(refused).toContain(config);
  }, 60_000);
});
