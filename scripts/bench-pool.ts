import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { silentLog } from "../lib/observability/log.ts";
import { batchExchange, type ChildRequest } from "../lib/pool/child-protocol.ts";
import { type ChildLaunch, WarmChild } from "../lib/pool/warm-child.ts";
import { intEnv, percentile, sleep } from "./bench-config.ts";

/**
 * `npm run bench:pool`: jobs/s through WARM children (the pool's way: one long-lived child serves
 * job after job) against SPAWN-PER-JOB (a fresh child per job: boot, one exchange, stop), for the
 * same child program, both demo children, with a slow boot (BOOT_DELAY_MS=100, a child that loads
 * a framework) and a bare one (BOOT_DELAY_MS=0, the interpreter's own start-up).
 *
 * Both modes run CONCURRENCY jobs at a time (warm: that many children, each serving its share;
 * spawn: that many children alive at once) with the same payload. Warm children are started and
 * answer one untimed warm-up job before the clock starts, so warm figures exclude the one-time boot
 * (shown apart as "first reply"). Spawn figures include everything a job costs: spawn, boot, the
 * exchange and waiting for the child to exit. Each measurement runs REPEATS times, warm and spawn
 * alternating, and the medians are reported.
 *
 * A third mode, WARM BATCH, sends the warm jobs as batch requests of BENCH_POOL_BATCH items (a
 * batch kind's call: one line out, one line back, an outcome per item), so the rows compare the
 * protocol's per-job overhead with and without batching.
 *
 * Env: BENCH_POOL_WARM_JOBS (400), BENCH_POOL_SPAWN_JOBS (40), BENCH_POOL_CONCURRENCY (2),
 * BENCH_POOL_REPEATS (3), BENCH_POOL_ROUNDS (sha256 rounds per job, 1000), BENCH_POOL_BATCH (100).
 */
const WARM_JOBS = intEnv("BENCH_POOL_WARM_JOBS", 400, 1);
const SPAWN_JOBS = intEnv("BENCH_POOL_SPAWN_JOBS", 40, 1);
const CONCURRENCY = intEnv("BENCH_POOL_CONCURRENCY", 2, 1);
const REPEATS = intEnv("BENCH_POOL_REPEATS", 3, 1);
const ROUNDS = intEnv("BENCH_POOL_ROUNDS", 1000, 1);
const BATCH = intEnv("BENCH_POOL_BATCH", 100, 1);
const BOOT_DELAYS_MS = [100, 0] as const;
/** A job that has not answered by then fails the bench: something is wrong, not slow. */
const EXCHANGE_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 2_000;

const root = fileURLToPath(new URL("..", import.meta.url));
const payload = { text: "bench", rounds: ROUNDS };
const expectedSha = (() => {
  let d: Buffer = Buffer.from(payload.text);
  for (let i = 0; i < ROUNDS; i++) d = createHash("sha256").update(d).digest();
  return d.toString("hex");
})();

interface Runtime {
  label: string;
  argv: readonly string[];
  /** Arguments that make the program print its real executable, then its version, one per line. */
  probe: readonly string[];
}
const runtimes: Runtime[] = [
  {
    label: "node",
    argv: [process.execPath, "children/digest.mjs"],
    probe: ["-p", "process.execPath + '\\n' + process.version"],
  },
  {
    label: "py",
    argv: ["python3", "children/digest.py"],
    probe: [
      "-c",
      "import sys, platform; print(sys.executable); print('Python ' + platform.python_version())",
    ],
  },
];

/** Every child the bench started, so none outlives it (even on Ctrl-C or a failure). */
const live = new Set<WarmChild>();
function startChild(runtime: Runtime, bootDelayMs: number): WarmChild {
  const launch: ChildLaunch = {
    kind: `${runtime.label}-digest`,
    argv: runtime.argv,
    env: { ...process.env, BOOT_DELAY_MS: String(bootDelayMs) },
    cwd: root,
  };
  const child = new WarmChild(launch, silentLog, (c) => live.delete(c));
  live.add(child);
  return child;
}
async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => c.stop(STOP_GRACE_MS)));
}
process.once("SIGINT", () => {
  for (const c of live) c.kill();
  process.exit(130);
});

let seq = 0;
/** One job on `child`; throws unless the child answers ok with the right digest. */
async function runJob(child: WarmChild): Promise<void> {
  const request: ChildRequest = { id: `bench-${++seq}`, kind: child.launch.kind, attempt: 1, payload };
  const end = await child.exchange(request, AbortSignal.timeout(EXCHANGE_TIMEOUT_MS));
  if (!("reply" in end)) throw new Error(`${child.launch.kind} job ${request.id}: ${JSON.stringify(end)}`);
  const { reply } = end;
  if (reply.status !== "ok")
    throw new Error(`${child.launch.kind} job ${request.id}: ${JSON.stringify(reply)}`);
  const sha = (reply.result as { sha256?: unknown } | undefined)?.sha256;
  if (sha !== expectedSha) throw new Error(`${child.launch.kind} job ${request.id}: wrong digest ${sha}`);
}

/** One batch request of `items` jobs on `child`; throws unless every item is ok with the right digest. */
async function runBatch(child: WarmChild, items: number): Promise<void> {
  const id = `bench-call-${++seq}`;
  const request = {
    id,
    kind: child.launch.kind,
    key: "bench",
    items: Array.from({ length: items }, (_, i) => ({ id: `${id}-${i}`, attempt: 1, payload })),
  };
  const end = await child.send(batchExchange(request), AbortSignal.timeout(EXCHANGE_TIMEOUT_MS));
  if (!("reply" in end)) throw new Error(`${child.launch.kind} call ${id}: ${JSON.stringify(end)}`);
  for (const reply of end.reply.items) {
    const sha =
      reply.status === "ok" ? (reply.result as { sha256?: unknown } | undefined)?.sha256 : undefined;
    if (sha !== expectedSha)
      throw new Error(`${child.launch.kind} item ${reply.id}: ${JSON.stringify(reply)}`);
  }
}

interface Sample {
  jobsPerSecond: number;
  latencyMs: number[];
}

/** `jobs` jobs through `workers` lanes pulling from one counter; each lane runs `one` per job. */
async function lanes(jobs: number, workers: number, one: (lane: number) => Promise<number>): Promise<Sample> {
  let next = 0;
  const latencyMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(workers, jobs) }, async (_, lane) => {
      while (next < jobs) {
        next++;
        latencyMs.push(await one(lane));
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { jobsPerSecond: jobs / seconds, latencyMs: latencyMs.sort((a, b) => a - b) };
}

/** Warm: CONCURRENCY children, booted and warmed up before the clock starts; latency = the exchange. */
async function warmRun(
  runtime: Runtime,
  bootDelayMs: number,
): Promise<Sample & { firstReplyMs: number; batch: Sample }> {
  const t0 = performance.now();
  const children = Array.from({ length: CONCURRENCY }, () => startChild(runtime, bootDelayMs));
  const firstReply = await Promise.all(
    children.map(async (c) => {
      await runJob(c);
      return performance.now() - t0;
    }),
  );
  try {
    const sample = await lanes(WARM_JOBS, CONCURRENCY, async (lane) => {
      const t = performance.now();
      await runJob(children[lane] as WarmChild);
      return performance.now() - t;
    });
    // The same jobs as batch requests: jobs/s counts items; latency is one request's.
    const calls = Math.ceil(WARM_JOBS / BATCH);
    const batched = await lanes(calls, CONCURRENCY, async (lane) => {
      const t = performance.now();
      await runBatch(children[lane] as WarmChild, BATCH);
      return performance.now() - t;
    });
    const batch = { ...batched, jobsPerSecond: batched.jobsPerSecond * BATCH };
    return { ...sample, firstReplyMs: Math.max(...firstReply), batch };
  } finally {
    await Promise.all(children.map((c) => c.stop(STOP_GRACE_MS)));
  }
}

/** Spawn-per-job: a fresh child per job; latency = spawn → reply; the lane is held until it exits. */
function spawnRun(runtime: Runtime, bootDelayMs: number): Promise<Sample> {
  return lanes(SPAWN_JOBS, CONCURRENCY, async () => {
    const t = performance.now();
    const child = startChild(runtime, bootDelayMs);
    try {
      await runJob(child);
      return performance.now() - t;
    } finally {
      await child.stop(STOP_GRACE_MS);
    }
  });
}

const median = (xs: readonly number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
interface ModeResult {
  jobs: number;
  jobsPerSecond: number[];
  p50Ms: number[];
  p95Ms: number[];
}
interface CaseResult {
  runtime: string;
  version: string;
  bootDelayMs: number;
  warm: ModeResult & { firstReplyMs: number[] };
  batch: ModeResult;
  spawn: ModeResult;
}
const record = (m: ModeResult, s: Sample) => {
  m.jobsPerSecond.push(s.jobsPerSecond);
  m.p50Ms.push(percentile(s.latencyMs, 50));
  m.p95Ms.push(percentile(s.latencyMs, 95));
};

/**
 * The runtime with its program resolved to the real interpreter, and its version; undefined when
 * the program is missing. Resolving matters where `python3` on PATH is a version-manager shim (a
 * pyenv shim is a bash script that adds ~70 ms to every start); a container's /usr/bin/python3 is not.
 */
function resolve(runtime: Runtime): { runtime: Runtime; version: string; via?: string } | undefined {
  const program = runtime.argv[0] as string;
  const r = spawnSync(program, runtime.probe, { encoding: "utf8" });
  if (r.error || r.status !== 0) return undefined;
  const [executable, version] = r.stdout.trim().split("\n");
  if (!executable || !version) return undefined;
  const resolved = { ...runtime, argv: [executable, ...runtime.argv.slice(1)] };
  return { runtime: resolved, version, ...(executable !== program ? { via: program } : {}) };
}

const results: CaseResult[] = [];
const resolvedRuntimes: NonNullable<ReturnType<typeof resolve>>[] = [];
const skipped: string[] = [];
console.log(
  `skyforge bench:pool: warm children vs spawn-per-job, ${CONCURRENCY} at a time, payload ${JSON.stringify(payload)}, ` +
    `${WARM_JOBS} warm / ${SPAWN_JOBS} spawn jobs per measurement, ${REPEATS} repeats (medians reported)`,
);
try {
  for (const declared of runtimes) {
    const found = resolve(declared);
    if (!found) {
      skipped.push(`${declared.label}: ${declared.argv[0]} not found`);
      continue;
    }
    const { runtime, version } = found;
    resolvedRuntimes.push(found);
    for (const bootDelayMs of BOOT_DELAYS_MS) {
      const empty = () => ({ jobsPerSecond: [], p50Ms: [], p95Ms: [] });
      const c: CaseResult = {
        runtime: runtime.label,
        version,
        bootDelayMs,
        warm: { jobs: WARM_JOBS, firstReplyMs: [], ...empty() },
        batch: { jobs: Math.ceil(WARM_JOBS / BATCH) * BATCH, ...empty() },
        spawn: { jobs: SPAWN_JOBS, ...empty() },
      };
      for (let r = 0; r < REPEATS; r++) {
        const w = await warmRun(runtime, bootDelayMs);
        record(c.warm, w);
        record(c.batch, w.batch);
        c.warm.firstReplyMs.push(w.firstReplyMs);
        await sleep(100);
        record(c.spawn, await spawnRun(runtime, bootDelayMs));
        await sleep(100);
      }
      results.push(c);
      console.log(
        `  done ${runtime.label} boot ${bootDelayMs} ms: warm ${c.warm.jobsPerSecond.map((x) => x.toFixed(0)).join(" / ")} jobs/s, ` +
          `spawn ${c.spawn.jobsPerSecond.map((x) => x.toFixed(1)).join(" / ")} jobs/s`,
      );
    }
  }
} finally {
  await stopAll();
}

const fmt = (x: number, digits = 1) => x.toFixed(digits);
const header = ["case", "mode", "jobs", "jobs/s", "range (3 runs)", "p50 ms", "p95 ms", "note"];
const table: string[][] = [];
for (const c of results) {
  const name = `${c.runtime} boot ${c.bootDelayMs} ms`;
  const range = (xs: number[], d: number) => `${fmt(Math.min(...xs), d)}–${fmt(Math.max(...xs), d)}`;
  table.push([
    name,
    "warm",
    String(c.warm.jobs),
    fmt(median(c.warm.jobsPerSecond), 0),
    range(c.warm.jobsPerSecond, 0),
    fmt(median(c.warm.p50Ms), 2),
    fmt(median(c.warm.p95Ms), 2),
    `boot excluded; first reply ${fmt(median(c.warm.firstReplyMs), 0)} ms`,
  ]);
  table.push([
    name,
    `warm batch ×${BATCH}`,
    String(c.batch.jobs),
    fmt(median(c.batch.jobsPerSecond), 0),
    range(c.batch.jobsPerSecond, 0),
    fmt(median(c.batch.p50Ms), 2),
    fmt(median(c.batch.p95Ms), 2),
    `latency per request of ${BATCH}`,
  ]);
  table.push([
    name,
    "spawn",
    String(c.spawn.jobs),
    fmt(median(c.spawn.jobsPerSecond)),
    range(c.spawn.jobsPerSecond, 1),
    fmt(median(c.spawn.p50Ms), 1),
    fmt(median(c.spawn.p95Ms), 1),
    "spawn + boot + job + exit",
  ]);
}
const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => (row[i] as string).length)));
const line = (cells: string[]) =>
  `  ${cells.map((cell, i) => (i < 2 || i === 7 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("  ")}`.trimEnd();
console.log();
console.log(line(header));
console.log(line(widths.map((w) => "-".repeat(w))));
for (const row of table) console.log(line(row));
console.log();
for (const { runtime: r, version, via } of resolvedRuntimes) {
  console.log(
    `  ${r.label}: ${r.argv.join(" ")}  (${version}${via ? `; "${via}" on PATH resolved to it` : ""})`,
  );
}
for (const s of skipped) console.log(`  skipped ${s}`);
console.log(
  `  latency: warm = one exchange on an already-booted child; spawn = spawn → reply (the lane then waits for the exit).`,
);
console.log(
  `  ratio = median warm jobs/s ÷ median spawn jobs/s, both from this run. Goal: ≥ 20x at boot 100 ms.`,
);
for (const c of results.filter((x) => x.bootDelayMs === 100)) {
  const ratio = median(c.warm.jobsPerSecond) / median(c.spawn.jobsPerSecond);
  console.log(`  goal ${c.runtime} boot 100 ms: ${ratio >= 20 ? "met" : "NOT met"} (${fmt(ratio, 0)}x)`);
}
if (live.size > 0) console.log(`  WARNING: ${live.size} children still alive`);
console.log();
for (const c of results) {
  const warm = median(c.warm.jobsPerSecond);
  const spawn = median(c.spawn.jobsPerSecond);
  const batch = median(c.batch.jobsPerSecond);
  console.log(
    `${c.runtime.padEnd(4)}  boot ${c.bootDelayMs} ms: warm ${fmt(warm, 0)} jobs/s, ` +
      `spawn ${fmt(spawn)} jobs/s, ratio ${fmt(warm / spawn, 0)}x; ` +
      `warm batch ×${BATCH} ${fmt(batch, 0)} jobs/s, ${fmt(batch / warm, 1)}x warm`,
  );
}
