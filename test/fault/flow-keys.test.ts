import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../support/project-copy.ts";
import { waitFor } from "../support/wait.ts";
import { countedSuccesses } from "./health.ts";
import { type Run, runsByJob, runsFrom } from "./observer-log.ts";
import { POOL_OBSERVER_LOG } from "./project-copy.ts";
import {
  type FaultProjectCopy,
  type FaultStack,
  faultScenarios,
  type Json,
  LEASE_MS,
  poolRestarted,
  report,
  TICK_SECONDS,
  times,
} from "./support.ts";

/**
 * Flow control per key under the fault suite (issue 26): "limits are never exceeded, including
 * when consumers die: a slot held by a dead consumer comes back within 2 × lease"; and for a kind of
 * several limits (issue 42, tenant-report: 3 a tenant, 1 a user, a shared token rate) across a
 * whole-stack SIGKILL. Keyed jobs of
 * the demo kind tenant-echo (gold- tenants 4 at once, others 2) across a whole-stack SIGKILL and a
 * freeze past the lease, and a keyed pool kind (2 at once) across a SIGKILL of the pool. Each
 * scenario asserts: every job ends done with exactly one successful run; no tenant ever had more
 * runs going at once than its concurrency (a killed run counts until its process died); after the
 * fault no tenant left a place unused for longer than PLACE_BACK_MS while it had a job waiting; and
 * once all is done GET /keys/{kind}/{key} shows nothing running or waiting.
 */

/**
 * How soon a place is back in use after the fault (docs/guide/flow-control.md, "When a consumer
 * dies"): within 2 × lease when its holder's run died (its next delivery takes the place over); a
 * hand-over the kill cut short (the run had ended, its next job not yet sent) is repaired by the
 * reaper's heal, within one tick of the restarted stack (5 s here) and a delivery. A loaded CI saw
 * 6.3 s for such a hand-over, past 2 × lease (6 s); with another fault file beside it and a busy
 * machine, 7.7 s (the delivery, a send and a receive through the emulator and a claim, took 2.7 s).
 */
const TICK_MS = TICK_SECONDS * 1000;
const DELIVERY_MS = 3_000;
const PLACE_BACK_MS = Math.max(2 * LEASE_MS, TICK_MS + DELIVERY_MS);

/** The demo kind: flow key payload.tenant, 4 at once for a gold- tenant, 2 for others. */
const TENANT_KIND = "tenant-echo";
const tenantLimit = (tenant: string) => (tenant.startsWith("gold-") ? 4 : 2);
/** A pool kind the copy declares (app/pool-kinds.ts): the observer child, keyed by payload.tenant. */
const POOL_FLOW_KIND = "flow-observe";
const POOL_FLOW_CONCURRENCY = 2;
/** The pool kind's second limit: one run at a time per user. */
const POOL_FLOW_USER_CONCURRENCY = 1;
/** More warm children than the key's places: the pool alone would run more at once. */
const POOL_FLOW_CHILDREN = 4;
const OBSERVER_CHILD = join(projectRoot, "test/fixtures/children/observer.mjs");

const TERMINAL = ["done", "dead", "cancelled"];

function replaceOnce(path: string, text: string, from: string, to: string): string {
  if (text.split(from).length !== 2) throw new Error(`${path}: expected one ${JSON.stringify(from)}`);
  return text.replace(from, to);
}

/** A handler that notes its run's start and end around `run` (an expression of `job` and `ctx`). */
const noted = (run: string) => `handler: async (job, ctx) => {
    note("start", ctx.job.id, ctx.attempt);
    try {
      const result = await ${run};
      note("end", ctx.job.id, ctx.attempt, "ok");
      return result;
    } catch (err) {
      note("end", ctx.job.id, ctx.attempt, \`aborted:\${String(ctx.signal.reason)}\`);
      throw err;
    }
  },`;

/**
 * The copy's edits. tenant-echo and tenant-report keep their declarations (their flow, queue,
 * attempts) and note each run's start and end in the observer log around their own handlers, so that a run the fault cut
 * short (no result) is seen too. The keyed pool kind is declared as an app adds one; its child is
 * the observer child, which sleeps payload.ms between its lines.
 */
function declareKeyedKinds(copy: FaultProjectCopy): void {
  const echoPath = join(copy.dir, "app/kinds/tenant-echo.ts");
  let echo = readFileSync(echoPath, "utf8");
  echo = replaceOnce(
    echoPath,
    echo,
    "handler: (job, ctx) => tenantRun(job, ctx.signal),",
    noted("tenantRun(job, ctx.signal)"),
  );
  const noteSource = `function note(event: string, jobId: string, attempt: number, outcome?: string): void {
  appendFileSync(
    process.env.FAULT_OBSERVER_LOG as string,
    \`\${JSON.stringify({ event, jobId, attempt, pid: process.pid, at: Date.now(), tier: "lambda", outcome })}\\n\`,
  );
}
`;
  echo = `import { appendFileSync } from "node:fs";
${echo}
${noteSource}`;
  writeFileSync(echoPath, echo);

  // tenant-report (several limits) notes its runs the same way.
  const reportPath = join(copy.dir, "app/kinds/tenant-report.ts");
  const reportKind = replaceOnce(
    reportPath,
    readFileSync(reportPath, "utf8"),
    "handler: (job, ctx) => reportRun(job, ctx.signal),",
    noted("reportRun(job, ctx.signal)"),
  );
  writeFileSync(reportPath, `import { appendFileSync } from "node:fs";\n${reportKind}\n${noteSource}`);

  const poolPath = join(copy.dir, "app/pool-kinds.ts");
  const entry = `  definePoolKind({
    name: "${POOL_FLOW_KIND}",
    argv: [${JSON.stringify(process.execPath)}, ${JSON.stringify(OBSERVER_CHILD)}],
    queue: "heavy",
    soft: ${POOL_FLOW_CHILDREN},
    hard: ${POOL_FLOW_CHILDREN},
    timeoutSeconds: 60,
    maxAttempts: 5,
    env: { FAULT_OBSERVER_LOG: ${POOL_OBSERVER_LOG} },
    flow: [
      {
        key: (p: JsonValue) => String((p as { tenant?: unknown } | null)?.tenant ?? ""),
        concurrency: ${POOL_FLOW_CONCURRENCY},
      },
      {
        name: "user",
        key: (p: JsonValue) => String((p as { user?: unknown } | null)?.user ?? ""),
        concurrency: ${POOL_FLOW_USER_CONCURRENCY},
      },
    ],
  }),
`;
  const end = "] as const;";
  writeFileSync(poolPath, replaceOnce(poolPath, readFileSync(poolPath, "utf8"), end, `${entry}${end}`));
}

const onStack = faultScenarios(declareKeyedKinds);

/** One enqueued keyed job. */
interface KeyedJob {
  id: string;
  tenant: string;
}

async function enqueueKeyed(
  stack: FaultStack,
  kind: string,
  payloads: readonly (Json & { tenant: string })[],
): Promise<KeyedJob[]> {
  const ids = await stack.enqueueMany(payloads.map((payload) => ({ kind, payload })));
  const jobs = ids.map((id, i) => ({ id, tenant: (payloads[i] as { tenant: string }).tenant }));
  // Evidence beside the observer log (kept when the scenario fails): whose each job is.
  appendFileSync(
    join(dirname(stack.logPath), "jobs.jsonl"),
    jobs.map((j) => `${JSON.stringify(j)}\n`).join(""),
  );
  return jobs;
}

/** GET /keys/{kind}/{key}: its answer's status and body. */
async function keyView(stack: FaultStack, kind: string, key: string): Promise<Json> {
  const r = await stack.call("GET", `/keys/${encodeURIComponent(kind)}/${encodeURIComponent(key)}`);
  return { http: r.status, ...r.body };
}

/** Waits (bounded) until `tenant`'s key has a run going and jobs parked; what GET /keys said. */
function untilRunningAndParked(stack: FaultStack, kind: string, tenant: string, timeoutMs = 20_000) {
  return waitFor(
    async () => {
      const view = await keyView(stack, kind, tenant);
      return view.http === 200 && view.running > 0 && view.waiting > 0 && view;
    },
    `${kind}/${tenant} to have runs going and jobs parked`,
    timeoutMs,
  );
}

/** Polls GET /jobs/{id} until every job is terminal (bounded); the views, when each was seen so, and the rest. */
async function untilTerminal(stack: FaultStack, ids: readonly string[], timeoutMs: number) {
  const seen = new Map<string, { view: Json; at: number }>();
  const pending = new Map<string, Json>();
  const deadline = Date.now() + timeoutMs;
  do {
    pending.clear();
    const left = ids.filter((id) => !seen.has(id));
    const answers = await Promise.all(left.map((id) => stack.call("GET", `/jobs/${id}`)));
    answers.forEach((r, i) => {
      const id = left[i] as string;
      if (r.status === 200 && TERMINAL.includes(r.body.status))
        seen.set(id, { view: r.body, at: Date.now() });
      else pending.set(id, { http: r.status, ...r.body });
    });
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 200));
  } while (pending.size > 0 && Date.now() < deadline);
  return { seen, pending };
}

/** The most runs going at one instant (an end before a start at the same instant), and those runs. */
function peakOf(runs: readonly Run[]): { peak: number; at: Run[] } {
  const edges = runs
    .flatMap((r) => [
      { t: r.start, step: 1, r },
      { t: r.end ?? Number.POSITIVE_INFINITY, step: -1, r },
    ])
    .sort((a, b) => a.t - b.t || a.step - b.step);
  const going = new Set<Run>();
  let peak = 0;
  let at: Run[] = [];
  for (const { step, r } of edges) {
    if (step > 0) going.add(r);
    else going.delete(r);
    if (going.size > peak) {
      peak = going.size;
      at = [...going];
    }
  }
  return { peak, at };
}

/**
 * The longest stretch of [from, to] in which a key had a free place (fewer runs going than its
 * concurrency) while one of its jobs waited (not done and not running): a place nobody used.
 * `doneAt` is when each job's successful run ended.
 */
function longestUnusedPlace(
  runs: readonly Run[],
  doneAt: ReadonlyMap<string, number>,
  limit: number,
  from: number,
  to: number,
): number {
  const ends = (r: Run) => r.end ?? Number.POSITIVE_INFINITY;
  const cuts = [...new Set([from, to, ...runs.flatMap((r) => [r.start, ends(r)]), ...doneAt.values()])]
    .filter((t) => t >= from && t <= to)
    .sort((a, b) => a - b);
  let longest = 0;
  let since: number | undefined;
  for (let i = 0; i < cuts.length - 1; i++) {
    const [a, b] = [cuts[i] as number, cuts[i + 1] as number];
    const mid = (a + b) / 2;
    const going = runs.filter((r) => r.start <= mid && ends(r) > mid);
    const busy = new Set(going.map((r) => r.jobId));
    const waiting = [...doneAt].some(([id, done]) => mid < done && !busy.has(id));
    if (going.length < limit && waiting) {
      since ??= a;
      longest = Math.max(longest, b - since);
    } else since = undefined;
  }
  return longest;
}

const iso = (ms: number | undefined) => (ms === undefined ? "?" : new Date(ms).toISOString());
const describeRun = (r: Run) =>
  `${r.jobId} attempt ${r.attempt} pid ${r.pid} ${iso(r.start)}..${iso(r.end)} ${r.outcome}`;

interface FlowCheck {
  kind: string;
  limitOf: (tenant: string) => number;
  /** When the fault ended (the restart, the pool back, the thaw). */
  faultEndedAt: number;
  /** By when a whole-stack kill had landed (a run whose handler returned just before it may run again). */
  killLandedBy?: number;
  timeoutMs: number;
}

/**
 * The scenario's four properties for every job and tenant (every problem listed, with evidence):
 * (a) each job ends done, with exactly one successful run, on the attempt it records, and no two
 * runs of it at once; (b) no tenant ever had more runs going at once than its concurrency; (c)
 * after the fault no tenant had a place unused for over PLACE_BACK_MS while a job of it waited; (d)
 * once all is done, GET /keys shows each tenant with nothing running or waiting (or 404).
 */
async function assertFlowHealthy(stack: FaultStack, jobs: readonly KeyedJob[], check: FlowCheck) {
  const ids = jobs.map((j) => j.id);
  const { seen, pending } = await untilTerminal(stack, ids, check.timeoutMs);
  const problems: string[] = [];
  const runs = runsFrom(stack.observerLog(), stack.deaths).filter((r) => ids.includes(r.jobId));
  const byJob = runsByJob(runs);
  const tenants = [...new Set(jobs.map((j) => j.tenant))];
  const doneAt = new Map<string, number>();

  // (a) every job done, exactly once.
  for (const { id, tenant } of jobs) {
    const jobRuns = [...(byJob.get(id) ?? [])].sort((a, b) => a.start - b.start);
    const evidence = () => jobRuns.map(describeRun).join("; ") || "no runs";
    const terminal = seen.get(id);
    if (!terminal) {
      const view = pending.get(id) ?? {};
      problems.push(
        `job ${id} (${tenant}) is still ${view.status ?? `HTTP ${view.http}`} (waitingForKey ${view.waitingForKey}, attempts ${view.attempts}) after ${check.timeoutMs} ms: ${evidence()}`,
      );
      continue;
    }
    const { view } = terminal;
    if (view.status !== "done")
      problems.push(`job ${id} (${tenant}) ended ${view.status}: ${view.lastError}`);
    if (view.flowKey !== tenant) problems.push(`job ${id}: flowKey ${view.flowKey}, expected ${tenant}`);
    for (const r of jobRuns.filter((r) => r.end === undefined))
      problems.push(`job ${id}: a run never ended and its process ${r.pid} is not dead (${evidence()})`);
    for (let i = 1; i < jobRuns.length; i++) {
      const prev = jobRuns.slice(0, i).reduce((m, r) => Math.max(m, r.end ?? Number.POSITIVE_INFINITY), 0);
      if ((jobRuns[i] as Run).start < prev) problems.push(`job ${id}: two runs at once (${evidence()})`);
    }
    const counted = countedSuccesses(jobRuns, view, check.killLandedBy);
    if (view.status === "done" && counted.length !== 1)
      problems.push(
        `job ${id} is done with ${counted.length} successful runs, expected 1 (${evidence()}; history ${JSON.stringify(view.history ?? [])})`,
      );
    const success = counted.at(-1);
    if (view.status === "done" && success) {
      doneAt.set(id, success.end as number);
      if (success.attempt !== view.attempts)
        problems.push(
          `job ${id}: done at attempts ${view.attempts}, its run succeeded on attempt ${success.attempt}`,
        );
      // tenant-echo says when its handler slept: inside the run the observer saw succeed.
      if (check.kind === TENANT_KIND) {
        const { startedAt, finishedAt } = view.result ?? {};
        if (
          view.result?.tenant !== tenant ||
          Date.parse(startedAt) < success.start ||
          Date.parse(finishedAt) > (success.end as number)
        )
          problems.push(
            `job ${id}: result ${JSON.stringify(view.result)} is not its run's (${describeRun(success)})`,
          );
      }
    } else doneAt.set(id, terminal.at);
  }

  // (b) no tenant over its concurrency; (c) no place unused while a job waited, after the fault.
  const peaks: Record<string, number> = {};
  const unusedMs: Record<string, number> = {};
  for (const tenant of tenants) {
    const limit = check.limitOf(tenant);
    const mine = jobs.filter((j) => j.tenant === tenant).map((j) => j.id);
    const tenantRuns = runs.filter((r) => mine.includes(r.jobId));
    const { peak, at } = peakOf(tenantRuns);
    peaks[tenant] = peak;
    if (peak > limit)
      problems.push(`${tenant}: ${peak} runs at once, over its ${limit}: ${at.map(describeRun).join("; ")}`);
    const tenantDone = new Map(mine.map((id) => [id, doneAt.get(id) ?? Number.POSITIVE_INFINITY]));
    const to = Math.max(check.faultEndedAt, ...tenantDone.values());
    if (Number.isFinite(to)) {
      const unused = longestUnusedPlace(tenantRuns, tenantDone, limit, check.faultEndedAt, to);
      unusedMs[tenant] = unused;
      if (unused > PLACE_BACK_MS)
        problems.push(
          `${tenant}: a place unused for ${unused} ms while a job waited after the fault, over ${PLACE_BACK_MS} ms (runs: ${tenantRuns.map(describeRun).join("; ")})`,
        );
    }
  }

  // (d) once all is done: no place held, none waiting.
  const keys: Record<string, Json> = {};
  for (const tenant of tenants) {
    let last: Json = {};
    const clear = await waitFor(
      async () => {
        last = await keyView(stack, check.kind, tenant);
        return (last.http === 404 || (last.http === 200 && last.running === 0 && last.waiting === 0)) && last;
      },
      `GET /keys/${check.kind}/${tenant} to show nothing running or waiting`,
      2 * LEASE_MS,
      100,
    ).catch(() => undefined);
    keys[tenant] = clear ?? last;
    if (!clear) problems.push(`${tenant}: every job done, yet GET /keys answers ${JSON.stringify(last)}`);
  }

  const figures = {
    jobs: jobs.length,
    runs: runs.length,
    reruns: runs.length - byJob.size,
    peaks,
    unusedPlaceAfterFaultMs: unusedMs,
    settledAfterFaultMs: Math.max(...[...seen.values()].map((s) => s.at)) - check.faultEndedAt,
    keys: Object.fromEntries(
      Object.entries(keys).map(([k, v]) => [k, v.http === 404 ? 404 : `${v.running}/${v.waiting}`]),
    ),
  };
  expect(problems, JSON.stringify(figures)).toEqual([]);
  return figures;
}

/** A tenant-report job of the scenario: its tenant and its user. */
interface ReportJob {
  id: string;
  tenant: string;
  user: string;
}
const REPORT_KIND = "tenant-report";
const REPORT_LIMITS = { tenant: 3, user: 1 } as const;

/**
 * The several-limits scenario's properties: every job done with exactly one successful run; no
 * tenant ever over 3 runs at once and no user over 1 (a killed run counts until its process died);
 * once all is done, GET /keys shows each tenant's and each user's key with nothing running or waiting.
 */
async function assertLimitsHeld(
  stack: FaultStack,
  jobs: readonly ReportJob[],
  killLandedBy: number | undefined,
) {
  const ids = jobs.map((j) => j.id);
  const { seen, pending } = await untilTerminal(stack, ids, 60_000);
  const problems: string[] = [...pending].map(([id, view]) => `job ${id} is still ${view.status}`);
  const runs = runsFrom(stack.observerLog(), stack.deaths).filter((r) => ids.includes(r.jobId));
  const byJob = runsByJob(runs);
  for (const [id, { view }] of seen) {
    if (view.status !== "done") problems.push(`job ${id} ended ${view.status}: ${view.lastError}`);
    const counted = countedSuccesses(byJob.get(id) ?? [], view, killLandedBy);
    if (view.status === "done" && counted.length !== 1)
      problems.push(`job ${id} is done with ${counted.length} successful runs, expected 1`);
  }
  const peaks: Record<string, number> = {};
  for (const limit of ["tenant", "user"] as const) {
    for (const key of new Set(jobs.map((j) => j[limit]))) {
      const mine = new Set(jobs.filter((j) => j[limit] === key).map((j) => j.id));
      const { peak, at } = peakOf(runs.filter((r) => mine.has(r.jobId)));
      peaks[`${limit}:${key}`] = peak;
      if (peak > REPORT_LIMITS[limit])
        problems.push(
          `${limit} ${key}: ${peak} runs at once, over its ${REPORT_LIMITS[limit]}: ${at.map(describeRun).join("; ")}`,
        );
      const path = `/keys/${REPORT_KIND}/${encodeURIComponent(key)}${limit === "tenant" ? "" : `?limit=${limit}`}`;
      const clear = await waitFor(
        async () => {
          const r = await stack.call("GET", path);
          return (
            (r.status === 404 || (r.status === 200 && r.body.running === 0 && r.body.waiting === 0)) && r
          );
        },
        `GET ${path} to show nothing running or waiting`,
        2 * LEASE_MS,
        100,
      ).catch(() => undefined);
      if (!clear) problems.push(`${limit} ${key}: every job done, yet GET ${path} shows places or a line`);
    }
  }
  const figures = { jobs: jobs.length, runs: runs.length, reruns: runs.length - byJob.size, peaks };
  expect(problems, JSON.stringify(figures)).toEqual([]);
  return figures;
}

/**
 * The several-limits scenario's jobs: 40 tenant-report jobs over 2 tenants and 5 users (`sleepMs`
 * each), once a user's line is long: runs going and jobs parked when the fault lands.
 */
async function reportJobsWaiting(stack: FaultStack, sleepMs: number) {
  const users = ["ann", "bob", "cy", "dee", "eve"];
  const payloads = times(40, (n) => ({
    tenant: n % 2 === 0 ? "acme" : "globex",
    user: users[n % 5] as string,
    tokens: 100,
    sleepMs,
  }));
  const ids = await stack.enqueueMany(payloads.map((payload) => ({ kind: REPORT_KIND, payload })));
  const jobs: ReportJob[] = ids.map((id, n) => ({
    id,
    tenant: payloads[n]?.tenant ?? "",
    user: payloads[n]?.user ?? "",
  }));
  const before = await waitFor(
    async () => {
      const r = await stack.call("GET", `/keys/${REPORT_KIND}/ann?limit=user`);
      return r.status === 200 && r.body.running > 0 && r.body.waiting > 0 && r.body;
    },
    "ann's key to have a run going and jobs parked",
    20_000,
  );
  return { jobs, before };
}

describe("flow control per key under faults on npm start", () => {
  it("a stack SIGKILLed with jobs of three limits running and parked, started again: no tenant over 3, no user over 1, every job done once", async () => {
    await onStack("limits-kill", async (stack) => {
      const { jobs, before } = await reportJobsWaiting(stack, 300);
      const { killedAt, deadAt, processes } = await stack.killAll();
      await stack.restart();
      const faultEndedAt = Date.now();
      const figures = await assertLimitsHeld(stack, jobs, deadAt);
      report("limits-kill", {
        processes,
        atKill: { running: before.running, waiting: before.waiting },
        downMs: faultEndedAt - killedAt,
        ...figures,
      });
    });
  }, 150_000);

  it("a stack frozen past the lease with jobs of three limits running and parked: no tenant over 3, no user over 1, every job done once", async () => {
    await onStack("limits-freeze", async (stack) => {
      // Runs longer than a hop of the line, so the freeze lands on runs going in several keys.
      const { jobs, before } = await reportJobsWaiting(stack, 1500);
      const { frozenAt, thawedAt, processes } = await stack.freeze(LEASE_MS + 2000);
      const figures = await assertLimitsHeld(stack, jobs, undefined);
      report("limits-freeze", {
        processes,
        atFreeze: { running: before.running, waiting: before.waiting },
        frozenMs: thawedAt - frozenAt,
        ...figures,
      });
    });
  }, 150_000);

  it("a stack SIGKILLed with keyed runs going and jobs parked, started again: limits hold, every job done once", async () => {
    await onStack("keys-kill", async (stack) => {
      const flood = "flood-1";
      const gold = "gold-1";
      const calm = "calm-1";
      const jobs = await enqueueKeyed(stack, TENANT_KIND, [
        ...times(60, (seq) => ({ tenant: flood, sleepMs: 300, seq })),
        ...times(12, (seq) => ({ tenant: gold, sleepMs: 300, seq })),
        ...times(3, (seq) => ({ tenant: calm, sleepMs: 300, seq })),
      ]);
      // The flood's key is full, its line long: the kill lands with runs going and jobs parked.
      const before = await untilRunningAndParked(stack, TENANT_KIND, flood);
      const { killedAt, deadAt, processes } = await stack.killAll();
      const startedBeforeKill = new Set(stack.observerLog().map((l) => l.jobId)).size;
      await stack.restart();
      const faultEndedAt = Date.now();

      const figures = await assertFlowHealthy(stack, jobs, {
        kind: TENANT_KIND,
        limitOf: tenantLimit,
        faultEndedAt,
        killLandedBy: deadAt,
        timeoutMs: 45_000,
      });
      report("keys-kill", {
        processes,
        atKill: { running: before.running, waiting: before.waiting, jobsStarted: startedBeforeKill },
        downMs: faultEndedAt - killedAt,
        ...figures,
      });
    });
  }, 120_000);

  it("a pool SIGKILLed mid-run of a pool kind of two limits: its places come back, the backlog drains at most 2 a tenant and 1 a user at once", async () => {
    await onStack("keys-pool-kill", async (stack) => {
      const tenant = "pool-t";
      // First the runs the kill cuts (long: on a loaded machine finding the pool and its children
      // takes longer than a short run), then the backlog that parks behind them.
      const long = await enqueueKeyed(
        stack,
        POOL_FLOW_KIND,
        times(POOL_FLOW_CONCURRENCY, (seq) => ({ tenant, user: `u${seq}`, ms: 6000, seq })),
      );
      await stack.waitForStarts(
        long.map((j) => j.id),
        "the long keyed runs to start on the pool",
        30_000,
      );
      const backlog = await enqueueKeyed(
        stack,
        POOL_FLOW_KIND,
        times(18, (seq) => ({ tenant, user: `u${seq % 3}`, ms: 600, seq: 100 + seq })),
      );
      const jobs = [...long, ...backlog];
      const userOf = new Map([
        ...long.map((j, seq) => [j.id, `u${seq}`] as const),
        ...backlog.map((j, seq) => [j.id, `u${seq % 3}`] as const),
      ]);
      await untilRunningAndParked(stack, POOL_FLOW_KIND, tenant);
      const pool = stack.poolPid() as number;
      expect(pool).toBeGreaterThan(0);
      const children = stack
        .processes()
        .filter((p) => p.ppid === pool)
        .map((p) => p.pid);
      stack.deathWatch.watch(children);
      // Runs cut by the kill end after it was sent: a child that sees its stdin close notes its end
      // before the pool's death is observed.
      const killSentAt = Date.now();
      await stack.killPids([pool], "the pool process");
      const killedAt = stack.deaths.get(pool) as number;
      const cut = runsFrom(stack.observerLog(), stack.deaths).filter(
        (r) => r.start <= killSentAt && (r.end === undefined || r.end >= killSentAt),
      );
      await waitFor(
        async () => children.every((pid) => stack.deaths.has(pid)),
        "the children to die",
        5_000,
        10,
      );
      await poolRestarted(stack, pool);
      const faultEndedAt = Date.now();

      const figures = await assertFlowHealthy(stack, jobs, {
        kind: POOL_FLOW_KIND,
        limitOf: () => POOL_FLOW_CONCURRENCY,
        faultEndedAt,
        timeoutMs: 45_000,
      });
      // Its second limit held too: no user ran two jobs at once, the runs the kill cut among them.
      const runs = runsFrom(stack.observerLog(), stack.deaths).filter((r) => userOf.has(r.jobId));
      for (const user of new Set(userOf.values())) {
        const { peak, at } = peakOf(runs.filter((r) => userOf.get(r.jobId) === user));
        expect(peak, `user ${user}: ${at.map(describeRun).join("; ")}`).toBeLessThanOrEqual(
          POOL_FLOW_USER_CONCURRENCY,
        );
      }
      // The runs the kill cut (the two long ones) ran again, each in its own place, and completed.
      const cutIds = [...new Set(cut.map((r) => r.jobId))];
      expect(cutIds.sort(), JSON.stringify(cut)).toEqual(long.map((j) => j.id).sort());
      const views = await Promise.all(cutIds.map((id) => stack.call("GET", `/jobs/${id}`)));
      for (const v of views) expect(v.body.attempts, JSON.stringify(v.body)).toBeGreaterThanOrEqual(2);
      report("keys-pool-kill", {
        cutRuns: cut.length,
        poolBackAfterMs: faultEndedAt - killedAt,
        ...figures,
      });
    });
  }, 120_000);

  it("a stack frozen past the lease with keyed runs going and jobs parked: limits hold, every job done once", async () => {
    await onStack("keys-freeze", async (stack) => {
      const plain = "frz-1";
      const gold = "gold-frz";
      // First the runs that the freeze holds (longer than it: none ends inside it), then the backlog.
      const running = await enqueueKeyed(stack, TENANT_KIND, [
        ...times(tenantLimit(plain), (seq) => ({ tenant: plain, sleepMs: 8000, seq })),
        ...times(tenantLimit(gold), (seq) => ({ tenant: gold, sleepMs: 8000, seq })),
      ]);
      await stack.waitForStarts(
        running.map((j) => j.id),
        "the long runs to start",
        20_000,
      );
      const backlog = await enqueueKeyed(stack, TENANT_KIND, [
        ...times(8, (seq) => ({ tenant: plain, sleepMs: 300, seq: 100 + seq })),
        ...times(8, (seq) => ({ tenant: gold, sleepMs: 300, seq: 100 + seq })),
      ]);
      const atFreeze = {
        [plain]: await untilRunningAndParked(stack, TENANT_KIND, plain),
        [gold]: await untilRunningAndParked(stack, TENANT_KIND, gold),
      };
      const { frozenAt, thawedAt, processes } = await stack.freeze(LEASE_MS + 2000);

      const figures = await assertFlowHealthy(stack, [...running, ...backlog], {
        kind: TENANT_KIND,
        limitOf: tenantLimit,
        faultEndedAt: thawedAt,
        timeoutMs: 45_000,
      });
      report("keys-freeze", {
        processes,
        frozenMs: thawedAt - frozenAt,
        atFreeze: Object.fromEntries(
          Object.entries(atFreeze).map(([k, v]) => [k, `${v.running}/${v.waiting}`]),
        ),
        ...figures,
      });
    });
  }, 120_000);
});
