import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { parsePoolConfig, resolvePoolKinds } from "../../lib/app/pool-config.ts";
import { systemClock } from "../../lib/clock.ts";
import { buildEngine } from "../../lib/engine.ts";
import type { Log } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import {
  dynamoClient,
  type Emulators,
  provisionQueues,
  provisionTable,
  sqsClient,
  startEmulators,
} from "../../local/emulators.ts";
import { startPoolProcess } from "../../local/pool-process.ts";
import { waitFor } from "../support/wait.ts";

const { queues } = app;

/**
 * The pool's real entry point (functions/pool/main.ts) in its own process, stopped with SIGTERM the
 * way ECS stops a task: the job that can finish inside the drain deadline finishes, the one that
 * can't is handed back (attempt returned, message visible at once), and the process exits 0.
 */
let emu: Emulators;
let engine: Engine;
let poolEnv: Record<string, string | undefined>;
let urls: Map<string, { url: string; dlqUrl: string }>;
const table = "pool-process-jobs";

beforeAll(async () => {
  emu = await startEmulators();
  const dynamodb = dynamoClient(emu.dynamodb.endpoint);
  const sqs = sqsClient(emu.sqs.endpoint);
  await provisionTable(dynamodb, table);
  urls = await provisionQueues(sqs, queues, "pp");
  const configText = JSON.stringify({
    kinds: {
      scripted: { argv: [process.execPath, "test/fixtures/children/scripted.mjs"], soft: 2, hard: 2 },
    },
  });
  const config = join(mkdtempSync(join(tmpdir(), "skyforge-pool-")), "pool.json");
  writeFileSync(config, configText);
  poolEnv = { ...process.env, SKYFORGE_POOL_CONFIG: config };
  const poolKinds = resolvePoolKinds(queues, app.poolKinds, parsePoolConfig(configText));
  engine = buildEngine({
    app,
    poolKinds,
    dynamodb,
    sqs,
    table,
    queueUrls: new Map([...urls].map(([n, q]) => [n, q.url])),
    clock: systemClock,
    metrics: new MemoryMetrics(),
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });
}, 60_000);
afterAll(async () => {
  await emu?.stop();
});

describe("the pool process", () => {
  it("on SIGTERM finishes what it can before the deadline, hands the rest back, and exits 0", async () => {
    const lines: string[] = [];
    const capture: Log = {
      debug: () => {},
      info: (_m, a) => lines.push(String(a?.line)),
      warn: (_m, a) => lines.push(String(a?.line)),
      error: (_m, a) => lines.push(String(a?.line)),
    };
    const pool = startPoolProcess({
      command: [process.execPath, "--import", "tsx", "functions/pool/main.ts"],
      baseEnv: poolEnv,
      endpoints: { dynamodb: emu.dynamodb.endpoint, sqs: emu.sqs.endpoint },
      table,
      queueUrls: new Map([...urls].map(([n, q]) => [n, q.url])),
      dlqUrls: new Map([...urls].map(([n, q]) => [n, q.dlqUrl])),
      drainSeconds: 3,
      waitSeconds: 1,
      log: capture,
    });
    const quick = await engine.producer.enqueue({ kind: "scripted", payload: { act: "sleep", ms: 1500 } });
    const stuck = await engine.producer.enqueue({ kind: "scripted", payload: { act: "hang" } });
    const running = (id: string) => async () => (await getJob(engine.store, id))?.status === "running";
    await waitFor(running(quick.job.id), "the quick job to run", 30_000);
    await waitFor(running(stuck.job.id), "the stuck job to run", 30_000);

    const code = await pool.stop();
    expect(code).toBe(0);

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
});
