import { app } from "../app/index.ts";
import {
  DYNAMODB_READ_OPERATIONS,
  DYNAMODB_WRITE_OPERATIONS,
  RequestMeter,
  sumStats,
} from "../bench/request-meter.ts";
import type { Clock } from "../lib/clock.ts";
import { Cleanup } from "../lib/ops/cleanup.ts";
import { runCronTick } from "../lib/ops/cron-tick.ts";
import { QueueAdmin } from "../lib/ops/queue-admin.ts";
import { runReaper } from "../lib/ops/reaper.ts";
import { startLocalStack } from "../local/stack.ts";

/**
 * `npm run bench:ops`: what one run of each scheduled function costs, in requests and capacity,
 * with an idle table and with 10 000 scheduled jobs (first not yet due, then all due). The queue is
 * paused so the worker's polling stays out of the counts.
 */
const SCHEDULED_JOBS = Number(process.env.BENCH_SCHEDULED_JOBS ?? 10_000);
const DAY_MS = 86_400_000;

class ShiftedClock implements Clock {
  offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
}

const clock = new ShiftedClock();
const meter = new RequestMeter();
const stack = await startLocalStack({
  app,
  port: 0,
  clock,
  autoTick: false,
  instrument: (clients) => meter.attachAll(clients),
});
const { engine } = stack;
await new QueueAdmin(engine).pause("default");

type Row = Record<string, string | number>;
const rows: Row[] = [];
async function measure(scenario: string, loop: string, run: () => Promise<object>): Promise<object> {
  meter.reset();
  const report = await run();
  const snap = meter.snapshot();
  const reads = sumStats(snap, (s, op) => s === "dynamodb" && DYNAMODB_READ_OPERATIONS.has(op));
  const writes = sumStats(snap, (s, op) => s === "dynamodb" && DYNAMODB_WRITE_OPERATIONS.has(op));
  const sqs = sumStats(snap, (s) => s === "sqs");
  rows.push({
    scenario,
    loop,
    ddbReads: reads.requests,
    rcu: round(reads.readUnits + reads.assumedReadUnits),
    ddbWrites: writes.requests,
    wcu: round(writes.writeUnits + writes.assumedWriteUnits),
    sqs: sqs.billedRequests,
    ms: Math.round(snap.elapsedMs),
  });
  return report;
}
const round = (n: number) => Math.round(n * 10) / 10;

const cleanupAws = new Cleanup(engine, { sweepItemsPerRun: 0 });
const cleanupLocal = new Cleanup(engine, { sweepItemsPerRun: 5_000 });
const cron = () => runCronTick({ engine, owner: "bench", tickMs: 60_000 });

async function allLoops(scenario: string): Promise<void> {
  await measure(scenario, "reaper", () => runReaper(engine));
  await measure(scenario, "cleanup (AWS: TTL, no sweep)", () => cleanupAws.run());
  await measure(scenario, "cleanup (local: sweep 5000 items)", () => cleanupLocal.run());
  await measure(scenario, "cron (1 schedule, not due)", cron);
}

await allLoops("idle");

const started = performance.now();
for (let i = 0; i < SCHEDULED_JOBS; i += 100) {
  const jobs = Array.from({ length: Math.min(100, SCHEDULED_JOBS - i) }, (_, j) => ({
    kind: "echo",
    payload: { n: i + j },
    delaySeconds: 2 * 86_400 + ((i + j) % 3600),
  }));
  await engine.producer.enqueueBatch(jobs);
}
const enqueueSeconds = (performance.now() - started) / 1000;
await allLoops(`${SCHEDULED_JOBS} scheduled, none due`);

// Past every runAt (the last is 2 days + 1 hour out): all 10 000 are due at once.
clock.offsetMs = 2 * DAY_MS + 3_600_000;
let promoted = 0;
for (let run = 1; promoted < SCHEDULED_JOBS && run <= 20; run++) {
  const report = (await measure(`${SCHEDULED_JOBS} scheduled, all due`, `reaper run ${run}`, () =>
    runReaper(engine),
  )) as { promoted: number };
  promoted += report.promoted;
  if (report.promoted === 0) break;
}

console.table(rows);
console.log(
  JSON.stringify({ scheduledJobs: SCHEDULED_JOBS, enqueueSeconds: round(enqueueSeconds), promoted, rows }),
);
await stack.stop();
