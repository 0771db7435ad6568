import { fileURLToPath } from "node:url";
import { type Message, ReceiveMessageCommand } from "@aws-sdk/client-sqs";
import { afterEach } from "vitest";
import type { Timers } from "../../lib/batching/key-batches.ts";
import { systemClock } from "../../lib/clock.ts";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import { buildEngine, openDurableRun } from "../../lib/engine.ts";
import type { Log } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import type { DrainReport } from "../../lib/pool/pool-options.ts";
import { PoolRunner } from "../../lib/pool/pool-runner.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import type { Emulators, ProvisionedQueue } from "../../local/emulators.ts";
import { testApp } from "./test-app.ts";
import { emulatorsForFile, engineWiring, freshResources } from "./test-emulators.ts";
import { waitFor } from "./wait.ts";

/** The test child (test/fixtures/children/scripted.mjs): each payload's `act` says how to (mis)behave. */
export const SCRIPTED_CHILD = fileURLToPath(new URL("../fixtures/children/scripted.mjs", import.meta.url));

export const KIND = "scripted";

/** What scripted.mjs answers with on success. */
export interface ScriptedResult {
  pid: number;
  attempt: number;
  echo: unknown;
}

export interface LogEntry {
  level: "debug" | "info" | "warn" | "error";
  message: string;
  attributes: Record<string, unknown> | undefined;
}

/** Keeps every line, so a test can tell which paths the pool took (a rip has no metric of its own). */
export class CapturingLog implements Log {
  readonly entries: LogEntry[] = [];
  debug(message: string, attributes?: Record<string, unknown>): void {
    this.entries.push({ level: "debug", message, attributes });
  }
  info(message: string, attributes?: Record<string, unknown>): void {
    this.entries.push({ level: "info", message, attributes });
  }
  warn(message: string, attributes?: Record<string, unknown>): void {
    this.entries.push({ level: "warn", message, attributes });
  }
  error(message: string, attributes?: Record<string, unknown>): void {
    this.entries.push({ level: "error", message, attributes });
  }
  matching(pattern: RegExp): LogEntry[] {
    return this.entries.filter((e) => pattern.test(e.message));
  }
}

export interface PoolHarnessOptions {
  /** Laid over the scripted kind's defaults (scripted.mjs, soft 1, hard 1, timeout 30 s, maxAttempts 3). */
  spec?: Partial<Omit<PoolKindSpec, "name" | "queue">>;
  /** Laid over the pool queue's defaults (lease 3 s, backoff 1 s). */
  queue?: Partial<Omit<QueueDeclaration, "name" | "tier">>;
  /** Start the runner at once (default true). */
  start?: boolean;
  /** The batch kinds' wait timers (a manual clock); real ones by default. */
  timers?: Timers;
}

export interface EnqueueOptions {
  priority?: "normal" | "critical";
  maxAttempts?: number;
  timeoutSeconds?: number;
}

export interface PoolHarness {
  engine: Engine;
  metrics: MemoryMetrics;
  log: CapturingLog;
  queue: QueueDeclaration;
  spec: PoolKindSpec;
  runner: PoolRunner;
  urls: ProvisionedQueue;
  /** Enqueues one scripted job through the producer; its id. */
  enqueue(payload: Record<string, unknown>, options?: EnqueueOptions): Promise<string>;
  job(id: string): Promise<JobItem>;
  /** Polls the store until the job has `status` (bounded); the item. */
  settled(id: string, status: JobItem["status"], timeoutMs?: number): Promise<JobItem>;
  /** The scripted child's answer stored as the job's result. */
  resultOf(item: JobItem): ScriptedResult;
  /** Children of the scripted kind right now. */
  children(): { busy: number; idle: number; total: number };
  /** Stops the runner once; later calls (and the afterEach) reuse the first report. */
  stop(deadlineMs: number): Promise<DrainReport>;
  /** Stops the runner (if the test didn't) and closes the clients; the afterEach calls it. */
  close(): Promise<void>;
  /** A plain ReceiveMessage on the pool queue, as a second consumer would do it. */
  receiveRaw(max: number, waitSeconds: number): Promise<Message[]>;
  /**
   * Another pool process on the same table and queue (its own engine and children, the same
   * metrics), started; close() stops it.
   */
  anotherPool(): PoolRunner;
}

const poolQueue = (overrides: PoolHarnessOptions["queue"]): QueueDeclaration => ({
  ...(testApp().queues.find((q) => q.tier === "pool") as QueueDeclaration),
  // Visibility is 6× this: a message the pool holds never comes back on its own during a test.
  workerTimeoutSeconds: 60,
  // Short, so heartbeats (every third of it) run during the longer jobs.
  leaseSeconds: 3,
  backoff: { baseSeconds: 1, maxSeconds: 1 },
  retentionDays: { done: 1, dead: 1 },
  maxReceiveCount: 100,
  ...overrides,
});

/** A fresh table and pool queue (unique names) on the shared emulators, and a PoolRunner on them. */
export async function createPoolHarness(
  emu: Emulators,
  options: PoolHarnessOptions = {},
): Promise<PoolHarness> {
  const queue = poolQueue(options.queue);
  const fresh = await freshResources(emu, [queue], { table: "pool", queues: "p", bucket: "claims" });
  const wiring = engineWiring(fresh);
  const { sqs } = wiring;
  const urls = fresh.queues.get(queue.name) as ProvisionedQueue;
  const spec: PoolKindSpec = {
    name: KIND,
    argv: [process.execPath, SCRIPTED_CHILD],
    env: {},
    timeoutSeconds: 30,
    soft: 1,
    hard: 1,
    maxAttempts: 3,
    ...options.spec,
    queue: queue.name,
  };
  const metrics = new MemoryMetrics();
  const log = new CapturingLog();
  const engineOn = () =>
    buildEngine({
      durableRuns: openDurableRun,
      app: testApp({ queues: [queue], kinds: [], poolKinds: [spec], schedules: [] }),
      ...wiring,
      clock: systemClock,
      metrics,
      log,
    });
  const engine = engineOn();
  const runnerOn = (e: Engine) =>
    new PoolRunner(e, {
      kinds: [spec],
      queues: [queue],
      baseEnv: process.env,
      cwd: process.cwd(),
      waitSeconds: 1,
      childGraceMs: 1000,
      // Pause checks are read fresh and repeated quickly, so a test sees them as they happen.
      pausedRecheckMs: 50,
      queueStateTtlMs: 0,
      ...(options.timers ? { timers: options.timers } : {}),
    });
  const runner = runnerOn(engine);
  const others: PoolRunner[] = [];
  if (options.start ?? true) runner.start();
  let stopped: Promise<DrainReport> | undefined;
  const job = async (id: string) => {
    const item = await getJob(engine.store, id);
    if (!item) throw new Error(`job ${id} not found`);
    return item;
  };
  return {
    engine,
    metrics,
    log,
    queue,
    spec,
    runner,
    urls,
    async enqueue(payload, o = {}) {
      const { job } = await engine.producer.enqueue({ kind: KIND, payload, ...o });
      return job.id;
    },
    job,
    settled: (id, status, timeoutMs = 20_000) =>
      waitFor(
        async () => {
          const item = await getJob(engine.store, id);
          return item?.status === status ? item : undefined;
        },
        `job ${id} to be ${status}`,
        timeoutMs,
      ),
    resultOf(item) {
      if (item.result === undefined) throw new Error(`job ${item.id} has no result (${item.status})`);
      return JSON.parse(item.result) as ScriptedResult;
    },
    children() {
      const { busy, idle } = runner.children(KIND);
      return { busy, idle, total: busy + idle };
    },
    stop(deadlineMs) {
      stopped ??= runner.stop(deadlineMs);
      return stopped;
    },
    async close() {
      // A short deadline: whatever still runs is handed back and its child killed, never leaked.
      stopped ??= runner.stop(200);
      try {
        await Promise.all([stopped, ...others.map((o) => o.stop(200))]);
      } finally {
        fresh.destroy();
      }
    },
    anotherPool() {
      const other = runnerOn(engineOn());
      others.push(other);
      other.start();
      return other;
    },
    async receiveRaw(max, waitSeconds) {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: urls.url,
          MaxNumberOfMessages: max,
          WaitTimeSeconds: waitSeconds,
        }),
      );
      return out.Messages ?? [];
    },
  };
}

/** Emulators for the whole file, a fresh pool per test, its runner (and children) stopped afterwards. */
export function poolHarnessPerTest(): {
  create(options?: PoolHarnessOptions): Promise<PoolHarness>;
  emulators(): Emulators;
} {
  const emulators = emulatorsForFile();
  const current: PoolHarness[] = [];
  afterEach(async () => {
    await Promise.all(current.splice(0).map((h) => h.close()));
  });
  return {
    emulators,
    create: async (options) => {
      const h = await createPoolHarness(emulators(), options);
      current.push(h);
      return h;
    },
  };
}

/** Whether a process with this pid still exists (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ESRCH") return false;
    throw err;
  }
}

export const gone = (pid: number, what = `process ${pid} to exit`) =>
  waitFor(async () => !alive(pid), what, 10_000, 20);

/**
 * Samples the runner's children every few ms and keeps the peaks: a poll of the store is too slow
 * to see a child that is busy for half a second.
 */
export function watchChildren(h: PoolHarness, everyMs = 5) {
  let maxBusy = 0;
  let maxTotal = 0;
  const sample = () => {
    const c = h.children();
    maxBusy = Math.max(maxBusy, c.busy);
    maxTotal = Math.max(maxTotal, c.total);
  };
  sample();
  const timer = setInterval(sample, everyMs);
  return {
    get maxBusy() {
      return maxBusy;
    },
    get maxTotal() {
      return maxTotal;
    },
    reset() {
      maxBusy = 0;
      maxTotal = 0;
      sample();
    },
    stop() {
      clearInterval(timer);
    },
  };
}
