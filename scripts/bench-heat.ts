import { performance } from "node:perf_hooks";
import { BENCH_BATCH_KIND, BENCH_BATCH_QUEUE, batchBenchApp } from "../bench/batch-kind.ts";
import { benchApp } from "../bench/bench-app.ts";
import { COMPLETION_KIND } from "../bench/completion-kind.ts";
import { durableHeatApp } from "../bench/durable-heat-kinds.ts";
import { heatDebounceFlowKind } from "../bench/flow-heat-kinds.ts";
import { HeatMeter } from "../bench/heat-meter.ts";
import {
  type HeatEntry,
  PARTITION_READ_UNITS_PER_SECOND,
  PARTITION_WRITE_UNITS_PER_SECOND,
  projectHeat,
} from "../bench/heat-projection.ts";
import type { Clock } from "../lib/clock.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { defineApp } from "../lib/declarations/define-app.ts";
import { silentLog } from "../lib/observability/log.ts";
import { type LocalStack, startLocalStack } from "../local/stack.ts";
import { payload, sleep } from "./bench-config.ts";
import { holdEventSource } from "./bench-enqueue.ts";
import { echo, enqueueAll, type HeatOptions, type Run, waitForSucceeded } from "./bench-heat-drive.ts";
import { durableHeatScenarios } from "./bench-heat-durable.ts";
import { flowHeatScenarios } from "./bench-heat-flow.ts";

/**
 * The scale model (`npm run bench -- --scenario heat`, docs/guide/scale.md): each scenario runs on a local
 * stack of its own with DynamoDB metered per partition key (bench/heat-meter.ts), and its hottest
 * key of every access pattern is projected to the target rate (bench/heat-projection.ts).
 */

export type { HeatOptions };

export interface HeatScenario {
  scenario: string;
  /** The jobs that ran, which the per-job figures divide by (unless `enqueues` is given). */
  jobs: number;
  /** A keyed burst's enqueues: when present, its figures are per enqueue, not per job. */
  enqueues?: number;
  /** The reaper runs a flow scenario took to go on past a stall (scripts/bench-heat-drive.ts waitOrHeal). */
  reaperRuns?: number;
  heat: HeatEntry[];
}

/** A rate-limit scope large enough that every acquire is granted: the bucket's own traffic is measured, not throttling. */
const OPEN_BUCKET = { scope: "partner-api", capacity: 1_000_000, refillPerSecond: 1_000_000 } as const;

/** A clock the scheduled scenario moves forward, so jobs due in 20 minutes come due at once. */
function shiftableClock(): Clock & { shift(ms: number): void } {
  let offset = 0;
  return {
    now: () => Date.now() + offset,
    shift: (ms) => {
      offset += ms;
    },
  };
}

async function metered(name: string, run: Run, options: HeatOptions): Promise<HeatScenario> {
  const heat = new HeatMeter();
  const stack = await startLocalStack({
    app: run.app,
    port: 0,
    log: silentLog,
    autoTick: false,
    ...(run.clock ? { clock: run.clock } : {}),
    instrument: (clients) => heat.attach(clients.dynamodb),
  });
  try {
    // Creating the table and reading the queues at start is not the jobs' traffic.
    heat.reset();
    const count = await run.drive(stack);
    const reaperRuns = run.reaperRuns?.();
    const ran = {
      scenario: name,
      ...(typeof count === "number" ? { jobs: count } : count),
      ...(reaperRuns !== undefined ? { reaperRuns } : {}),
    };
    const per = typeof count === "number" ? count : count.enqueues;
    return { ...ran, heat: projectHeat(heat.snapshot(), per, options.targetJobsPerSecond) };
  } finally {
    await stack.stop();
  }
}

/** Every scenario of the list, in order, then the durable ones; each on its own stack. */
export async function runHeatScenarios(options: HeatOptions): Promise<HeatScenario[]> {
  const { jobs, timeoutMs } = options;
  // Every app is built for the target rate, so its table layout is the one that rate deploys.
  const scaled = (app: App): App =>
    defineApp({ ...app, scale: { jobsPerSecond: options.targetJobsPerSecond } });
  const plainApp = scaled(benchApp(() => {}));
  const tag = Date.now().toString(36);
  const scenarios: [string, () => Run][] = [
    [
      "plain",
      () => ({
        app: plainApp,
        drive: async (stack) => {
          const n = await enqueueAll(
            stack,
            Array.from({ length: jobs }, (_, i) => echo(i)),
          );
          await waitForSucceeded(stack, n, "plain", timeoutMs);
          return n;
        },
      }),
    ],
    [
      "uniqueKey mix",
      () => ({
        app: plainApp,
        // Every job its own key; then a tenth of the keys enqueued again: deduped while the first
        // job is live, a new job once it has ended (a uniqueKey dedupes while live).
        drive: async (stack) => {
          const key = (i: number) => ({ uniqueKey: `${tag}-${i}` });
          const first = await enqueueAll(
            stack,
            Array.from({ length: jobs }, (_, i) => echo(i, key(i))),
          );
          const again = Array.from({ length: Math.ceil(jobs / 10) }, (_, i) => echo(i * 10, key(i * 10)));
          const n = first + (await enqueueAll(stack, again));
          await waitForSucceeded(stack, n, "uniqueKey mix", timeoutMs);
          return n;
        },
      }),
    ],
    [
      "scheduled",
      () => {
        // Due past SQS's 15-minute delay: each job enters the status index, and the reaper's
        // promotion takes it out again.
        const clock = shiftableClock();
        return {
          app: plainApp,
          clock,
          drive: async (stack) => {
            const runAt = new Date(clock.now() + 20 * 60_000).toISOString();
            const n = await enqueueAll(
              stack,
              Array.from({ length: jobs }, (_, i) => echo(i, { runAt })),
            );
            clock.shift(21 * 60_000);
            // The reaper alone (cleanup's sweep and cron are ticks' traffic, not the jobs'), tick
            // after tick: each promotes a bounded number.
            const deadline = performance.now() + timeoutMs;
            while (stack.metrics.total("succeeded") < n && performance.now() < deadline) {
              await stack.ticker.run("reaper");
              await sleep(100);
            }
            await waitForSucceeded(stack, n, "scheduled", timeoutMs);
            return n;
          },
        };
      },
    ],
    [
      "rate-limited kind",
      () => ({
        app: defineApp({ ...plainApp, rateLimits: [OPEN_BUCKET] }),
        drive: async (stack) => {
          const requests = Array.from({ length: jobs }, (_, i) => ({
            kind: "partner-call",
            payload: { orderId: `o-${i}` },
          }));
          const n = await enqueueAll(stack, requests);
          await waitForSucceeded(stack, n, "rate-limited kind", timeoutMs);
          return n;
        },
      }),
    ],
    [
      "batch kind, one hot key",
      () => ({
        app: scaled(batchBenchApp()),
        drive: async (stack) => {
          const requests = Array.from({ length: jobs }, (_, i) => ({
            kind: BENCH_BATCH_KIND,
            payload: { ...payload(i, 256), key: "hot" },
          }));
          // A backlog drained at once, as a hot key's jobs arrive under load: full calls of
          // maxSize, whatever this machine's speed (the bench's batch scenario does the same).
          const source = await holdEventSource(stack, BENCH_BATCH_QUEUE, 2);
          const n = await enqueueAll(stack, requests);
          await source.resume();
          await waitForSucceeded(stack, n, "batch kind", timeoutMs);
          return n;
        },
      }),
    ],
    [
      `group of ${options.groupChildren} children`,
      () => ({ app: plainApp, drive: (stack) => driveGroup(stack, options) }),
    ],
  ];
  const results: HeatScenario[] = [];
  for (const [name, run] of scenarios) results.push(await metered(name, run(), options));
  // Flow control (issues 26 and 42): a tenant's flood, several limits at once, a debounced burst.
  const flowApp = scaled(defineApp({ ...plainApp, kinds: [...plainApp.kinds, heatDebounceFlowKind] }));
  for (const [name, run] of flowHeatScenarios(flowApp, options))
    results.push(await metered(name, run(), options));
  // Durable jobs (issue 40): steps, waits, kept events and children, after the plain ones.
  for (const [name, run] of durableHeatScenarios(scaled(durableHeatApp(plainApp)), options))
    results.push(await metered(name, run(), options));
  return results;
}

/** One group, its children added 1 000 a request, sealed, run to its completion job. */
async function driveGroup(stack: LocalStack, options: HeatOptions): Promise<number> {
  const children = options.groupChildren;
  const { group } = await stack.engine.groups.create({
    sealed: false,
    onComplete: { kind: COMPLETION_KIND },
  });
  for (let start = 0; start < children; start += 1000) {
    const size = Math.min(1000, children - start);
    await stack.engine.groups.addChildren(group.id, {
      children: Array.from({ length: size }, (_, i) => echo(start + i)),
      seal: start + size >= children,
    });
  }
  // The children and the completion job.
  await waitForSucceeded(stack, children + 1, "group", options.timeoutMs);
  return children + 1;
}

/** The JSON line's fields: every scenario's entries, each naming its scenario, and what ran. */
export function heatJson(results: readonly HeatScenario[], targetJobsPerSecond: number) {
  return {
    scenario: "heat",
    targetJobsPerSecond,
    heatScenarios: results.map((r) => ({
      scenario: r.scenario,
      jobs: r.jobs,
      ...(r.enqueues !== undefined ? { enqueues: r.enqueues } : {}),
      ...(r.reaperRuns !== undefined ? { reaperRuns: r.reaperRuns } : {}),
    })),
    heat: results.flatMap((r) => r.heat.map((h) => ({ scenario: r.scenario, ...h }))),
  };
}

/** What a scenario's figures are per: its jobs, or a burst's enqueues (and the jobs they came to). */
function ranText(r: HeatScenario): string {
  const ran =
    r.enqueues === undefined
      ? `${r.jobs} jobs`
      : `${r.enqueues} enqueues, ${r.jobs} jobs; figures per enqueue`;
  return r.reaperRuns === undefined ? ran : `${ran}; ${r.reaperRuns} reaper runs`;
}

export function printHeatTable(results: readonly HeatScenario[], targetJobsPerSecond: number): void {
  console.log(
    `skyforge bench --scenario heat: each pattern's hottest DynamoDB partition key, per job and at ${targetJobsPerSecond} jobs/s (limits: ${PARTITION_WRITE_UNITS_PER_SECOND} write and ${PARTITION_READ_UNITS_PER_SECOND} read units a second a partition)`,
  );
  const header = ["pattern", "WCU/job", "RCU/job", "WCU/s", "RCU/s", "over", "hottest key"];
  for (const r of results) {
    console.log(`\n  ${r.scenario} (${ranText(r)})`);
    const rows = r.heat.map((h) => [
      h.pattern,
      String(h.writesPerJob),
      String(h.readsPerJob),
      String(h.projectedWritesPerSecond),
      String(h.projectedReadsPerSecond),
      h.overLimit ? "OVER" : "-",
      h.key,
    ]);
    const widths = header.map((c, i) => Math.max(c.length, ...rows.map((row) => (row[i] as string).length)));
    const line = (cells: string[]) =>
      `    ${cells.map((c, i) => (i === 0 || i === 6 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ")}`;
    console.log(line(header));
    for (const row of rows) console.log(line(row));
  }
}
