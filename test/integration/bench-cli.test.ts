import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { FAIL_ONCE_KIND } from "../../bench/fail-once-kind.ts";
import pkg from "../../package.json" with { type: "json" };
import { parseBenchArgs } from "../../scripts/bench-args.ts";
import { analyseWindow, measureWindow, startBenchStack, windowJson } from "../../scripts/bench-window.ts";

/**
 * `npm run bench`'s command line through the real code: a tiny window on the real local stack from
 * parsed flags, and the script itself as `npm run bench -- …` runs it (a tiny single window, the
 * durable scenario alone, and usage errors). `--scenario all`'s failure handling is test/unit/bench-all.test.ts.
 */

const root = fileURLToPath(new URL("../..", import.meta.url));
const context = { env: {}, kinds: ["echo"], poolKinds: ["py-digest"] };

function single(argv: string[]) {
  const parsed = parseBenchArgs(argv, context);
  if (parsed.mode !== "single") throw new Error(`not a single run: ${JSON.stringify(parsed)}`);
  const { jobs, json: _json, ...shape } = parsed;
  return { jobs, shape };
}

/** One window measured on a bench stack started from `argv`, the stack stopped again whatever happens. */
async function measuredWindow(argv: string[]) {
  const { jobs, shape } = single(argv);
  const bench = await startBenchStack(shape);
  try {
    return { window: await measureWindow(bench, jobs), shape };
  } finally {
    await bench.stack.stop();
  }
}

/** `npm run bench`'s command, from package.json (its program is one of node_modules/.bin's, as npm runs it). */
const [benchProgram = "", ...benchArgs] = (pkg.scripts.bench as string).split(" ");

/** Runs the bench script's command as npm does; resolves with its exit code and output. */
function runBenchScript(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(`${root}node_modules/.bin/${benchProgram}`, [...benchArgs, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let [stdout, stderr] = ["", ""];
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const todaysFields = [
  "jobsPerSecond",
  "latencyMs",
  "requestsPerJob",
  "wcuPerJob",
  "rcuPerJob",
  "usdPerMillionJobs",
  "claimStorageUsdPerMillion",
];

describe("bench from its flags", () => {
  test("--jobs 20 --payload-bytes 1024: one window, its JSON fields", async () => {
    const { window, shape } = await measuredWindow(["--jobs", "20", "--payload-bytes", "1024", "--json"]);
    expect(window.items).toHaveLength(20);
    for (const item of window.items) {
      expect(item.kind).toBe("echo");
      expect(item.status).toBe("done");
      // Over 400 bytes: the payload lives in its own item, exactly as big as asked.
      expect(item.payloadRef).toBe(true);
      expect(item.result).toHaveLength(1024);
    }
    const json = windowJson(analyseWindow(window), shape);
    expect(json).toMatchObject({ kind: "echo", lane: "fenced", payloadBytes: 1024 });
    expect(Object.keys(json)).toEqual(["kind", "lane", "payloadBytes", ...todaysFields]);
    expect(json.usdPerMillionJobs).toBeGreaterThan(0);
    expect(json.requestsPerJob.dynamodbWrite).toBeGreaterThan(0);
  });

  test("--payload-bytes 32768: payload and echoed result each one S3 PUT, the payload one GET; storage apart", async () => {
    const { window, shape } = await measuredWindow(["--jobs", "20", "--payload-bytes", "32768"]);
    for (const item of window.items) {
      expect(item.payloadObject).toMatch(/^claims\/\d+d\//);
      expect(item.resultObject).toMatch(/^claims\/\d+d\/.+\/result-1$/);
    }
    const a = analyseWindow(window);
    expect([a.s3Puts, a.s3Gets]).toEqual([40, 20]);
    expect(a.cost.breakdown.s3Requests).toBeCloseTo(2 * 5 + 0.4, 9);
    const json = windowJson(a, shape);
    expect(json.requestsPerJob.s3).toBe(3);
    // 32 KB (plus the PUT's framing) kept for its class's days, at $0.023 per GB-month.
    expect(json.claimStorageUsdPerMillion).toBeGreaterThan(0);
  });

  test("--fail-once --unique: every job runs twice, each with its own uniqueKey", async () => {
    const { window, shape } = await measuredWindow(["--jobs", "10", "--fail-once", "--unique"]);
    expect(window.items).toHaveLength(10);
    for (const item of window.items) {
      expect(item.kind).toBe(FAIL_ONCE_KIND);
      expect(item.attempts).toBe(2);
      expect(item.uniqueKey).toMatch(/^bench-/);
      expect(JSON.parse(item.result ?? "null")).toMatchObject({ seq: expect.any(Number) });
    }
    expect(new Set(window.items.map((i) => i.uniqueKey)).size).toBe(10);
    const json = windowJson(analyseWindow(window), shape);
    expect(json).toMatchObject({
      kind: "echo",
      lane: "fenced",
      payloadBytes: 256,
      unique: true,
      failOnce: true,
    });
  }, 60_000);

  test("the script: --jobs 5 --payload-bytes 204800 --json measures that window alone and prints its JSON line", async () => {
    const run = await runBenchScript(["--jobs", "5", "--payload-bytes", "204800", "--json"], {
      BENCH_WARMUP: "2",
    });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const json = JSON.parse(lines[0] as string);
    expect(json).toMatchObject({ kind: "echo", lane: "fenced", payloadBytes: 204_800 });
    // The window's figures and nothing else: no group, batch or cold start was asked for.
    expect(Object.keys(json)).toEqual(["kind", "lane", "payloadBytes", ...todaysFields]);
    expect(json.requestsPerJob.s3).toBe(3);
  }, 120_000);

  test("the script: --scenario durable --json, 10 jobs a window: one JSON line, a step one write (one WCU in a small item), a sleep one send, a child invocation its own job", async () => {
    const run = await runBenchScript(["--scenario", "durable", "--json"], { BENCH_DURABLE_JOBS: "10" });
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const { scenario, durable } = JSON.parse(lines[0] as string);
    expect(scenario).toBe("durable");
    expect(durable).toMatchObject({ jobs: 10, stepsPerJob: 10, sleepSeconds: 1, ticks: 0 });
    expect(durable.error).toBeUndefined();
    // A step is one conditional write of the job item, billed by its KB; no message.
    expect(durable.perStep).toMatchObject({ dynamodbWrites: 1, jobItemWrites: 1, sends: 0, receives: 0 });
    expect(durable.perStep.wcu).toBeGreaterThanOrEqual(1);
    // A few short results keep the item under 1 KB: each step is then the one WCU the goal names.
    expect(durable.jobItemBytes.smallSteps).toBeLessThan(1024);
    expect(durable.perSmallStep).toMatchObject({ dynamodbWrites: 1, jobItemWrites: 1, wcu: 1, sends: 0 });
    // A sleep: the suspend's write and the wake-up run's claim, one delayed send and its receive.
    expect(durable.perSleep).toMatchObject({ dynamodbWrites: 2, sends: 1, receives: 1 });
    expect(durable.usdPerMillionJobs.steps).toBeGreaterThan(durable.usdPerMillionJobs.plain);
    expect(durable.usdPerMillionSteps).toBeGreaterThan(0);
    expect(durable.usdPerMillionSleeps).toBeGreaterThan(0);
    expect(durable).toMatchObject({ goalUsdPerMillionSteps: 1, lambdaDurableUsdPerMillionOperations: 8 });
    expect(durable.timesCheaperThanLambdaDurable.step).toBeCloseTo(8 / durable.usdPerMillionSteps, 1);
    // A parallel step is one write, as a step is: the map window's 10 steps in one ctx.map.
    expect(durable).toMatchObject({ mapStepsPerJob: 10, mapConcurrency: 10 });
    // The whole report on a failure: seen once at 1.14 writes a parallel step under the full suite's load.
    expect(durable.perMapStep, JSON.stringify(durable)).toMatchObject({
      dynamodbWrites: 1,
      jobItemWrites: 1,
      sends: 0,
      receives: 0,
    });
    expect(durable.usdPerMillionMapSteps).toBeGreaterThan(0);
    // A child invocation: at least the child's own enqueue (a send) and run (a receive), and more
    // writes than a plain job's (the child's, the parent's record and its resume).
    expect(durable.perChildInvocation.sends).toBeGreaterThanOrEqual(1);
    expect(durable.perChildInvocation.receives).toBeGreaterThanOrEqual(1);
    expect(durable.perChildInvocation.dynamodbWrites).toBeGreaterThan(3);
    expect(durable.usdPerMillionChildInvocations).toBeGreaterThan(0);
    expect(durable.timesCheaperThanLambdaDurable.childInvocation).toBeCloseTo(
      8 / durable.usdPerMillionChildInvocations,
      1,
    );
  }, 60_000);

  test("the script: an unknown flag is exit 2 with the usage, before any stack starts", async () => {
    const run = await runBenchScript(["--jobs", "20", "--payload", "1024"], {});
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("bench: Unknown option '--payload'");
    expect(run.stderr).toContain("usage: npm run bench ");
  });

  test("the script: a target rate of zero, below zero or not a number is exit 2 with the usage", async () => {
    // Three processes at once: each is a start of the script (seconds of module loading) and nothing more.
    const rates = ["0", "-10", "fast"];
    const runs = await Promise.all(
      rates.map((rate) => runBenchScript(["--scenario", "heat", `--target-rate=${rate}`], {})),
    );
    for (const [i, rate] of rates.entries()) {
      const run = runs[i] as (typeof runs)[number];
      expect(run.code, rate).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain(
        `bench: --target-rate must be a number of jobs a second above 0, got "${rate}"`,
      );
      expect(run.stderr).toContain("--scenario heat [--target-rate R]");
    }
  });
});
