import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { isRunning } from "../../local/process-running.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { waitFor } from "../support/wait.ts";
import { type ObserverLine, readObserverLog } from "./observer-log.ts";
import { DeathWatch, type ProcessInfo, signalEach, stackProcesses } from "./processes.ts";
import { type FaultProjectCopy, makeProjectCopy, writePoolConfig } from "./project-copy.ts";

export { assertHealthy, type HealthFigures, type HealthOptions } from "./health.ts";
export {
  BATCH_KIND,
  BATCH_LEASE_MS,
  type FaultProjectCopy,
  LAMBDA_KIND,
  LEASE_MS,
  LEASE_SECONDS,
  makeProjectCopy,
  POOL_CHILDREN,
  POOL_KIND,
} from "./project-copy.ts";

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field.
export type Json = Record<string, any>;

/** The stack's scheduled functions (reaper, heal, cron) run every this many seconds in the suite. */
export const TICK_SECONDS = 5;

/** The local stack's pool entry (scripts/start.ts runs it over app/). */
const POOL_ENTRY = "functions/pool/dev-main.ts";

/**
 * `npm start` in the project copy, with the observer's log and data directory of one scenario, and
 * the faults the suite injects into it. Every kill is recorded: a run that never wrote its end
 * line lasted until its process died (`deaths`).
 */
export class FaultStack {
  readonly deathWatch = new DeathWatch();
  private process: StackProcess;
  private killed = false;
  /**
   * Watches the process of every pool run as its start line appears: the pool SIGKILLs a child
   * whose run lost its lease (no end line), and a run that started after a fault (a freeze's thaw)
   * is in no pid list a fault took, so without this its end would be unknown and read as "never".
   */
  private readonly poolRunFollower = setInterval(() => this.watchPoolRuns(), 25);

  readonly copy: FaultProjectCopy;
  readonly logPath: string;
  readonly dataDir: string;

  private constructor(copy: FaultProjectCopy, logPath: string, dataDir: string, process: StackProcess) {
    this.copy = copy;
    this.logPath = logPath;
    this.dataDir = dataDir;
    this.process = process;
  }

  /** Starts the stack on a fresh log and data directory. */
  static async start(copy: FaultProjectCopy, name: string): Promise<FaultStack> {
    const scratch = mkdtempSync(join(tmpdir(), `skyforge-fault-${name}-`));
    const logPath = join(scratch, "observer.log");
    const dataDir = join(scratch, "data");
    // Pool children run as users of their own: they may pass through the scratch directory (not list
    // it) and append to the observer log, nothing else there.
    chmodSync(scratch, 0o711);
    writeFileSync(logPath, "");
    chmodSync(logPath, 0o666);
    writePoolConfig(join(scratch, "pool.json"), logPath);
    return new FaultStack(copy, logPath, dataDir, await FaultStack.launch(copy, logPath, dataDir));
  }

  private static launch(copy: FaultProjectCopy, logPath: string, dataDir: string) {
    return startStackProcess(
      {
        SKYFORGE_POOL_CONFIG: join(dirname(logPath), "pool.json"),
        FAULT_OBSERVER_LOG: logPath,
        SKYFORGE_TICK_SECONDS: String(TICK_SECONDS),
        // FAULT_LOG_LEVEL=INFO (or DEBUG) keeps the stack's log lines in a failed scenario's evidence.
        LOG_LEVEL: process.env.FAULT_LOG_LEVEL ?? "WARN",
        // Each scenario's own, empty at first: a restart finds the state the killed stack left.
        SKYFORGE_DATA_DIR: dataDir,
      },
      copy.dir,
    );
  }

  get url(): string {
    return this.process.url;
  }

  get pid(): number {
    return this.process.pid;
  }

  get deaths(): ReadonlyMap<number, number> {
    return this.deathWatch.deaths;
  }

  output(): string {
    return this.process.output();
  }

  /** JSON over HTTP, bounded, so a wedged stack fails the test instead of hanging it. */
  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      signal: AbortSignal.timeout(15_000),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Json };
  }

  /** Enqueues jobs with one POST /jobs/batch per 100; the ids in order (any item error throws). */
  async enqueueMany(jobs: readonly Json[]): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < jobs.length; i += 100) {
      const r = await this.call("POST", "/jobs/batch", { jobs: jobs.slice(i, i + 100) });
      if (r.status !== 200) throw new Error(`batch enqueue answered ${r.status}: ${JSON.stringify(r.body)}`);
      for (const item of r.body.results as Json[]) {
        if (!item.id) throw new Error(`batch item refused: ${JSON.stringify(item)}`);
        ids.push(item.id);
      }
    }
    return ids;
  }

  /** Waits until the queue holds no message at all (visible, in flight or delayed); how long that took. */
  async untilQueueEmpty(queue: string, timeoutMs: number): Promise<number> {
    const since = Date.now();
    await waitFor(
      async () => {
        const r = await this.call("GET", "/queues");
        const counts = (r.body.items as Json[]).find((q) => q.name === queue)?.counts;
        return counts && counts.visible + counts.inFlight + counts.delayed === 0;
      },
      `queue ${queue} to be empty`,
      timeoutMs,
      100,
    );
    return Date.now() - since;
  }

  observerLog(): ObserverLine[] {
    return readObserverLog(this.logPath);
  }

  private watchPoolRuns(): void {
    const pids = this.observerLog()
      .filter((l) => l.event === "start" && l.tier === "pool")
      .map((l) => l.pid);
    this.deathWatch.watch(new Set(pids));
  }

  /** The start lines of `ids`' runs, once at least `count` runs of each have started. */
  waitForStarts(
    ids: readonly string[],
    what: string,
    timeoutMs = 20_000,
    count = 1,
  ): Promise<ObserverLine[]> {
    return waitFor(
      async () => {
        const starts = this.observerLog().filter((l) => l.event === "start" && ids.includes(l.jobId));
        return ids.every((id) => starts.filter((l) => l.jobId === id).length >= count) && starts;
      },
      what,
      timeoutMs,
    );
  }

  processes(): ProcessInfo[] {
    return stackProcesses(this.pid);
  }

  /** The pool process (the Fargate entry point the stack runs as a child), if one is alive. */
  poolPid(): number | undefined {
    return this.processes().find((p) => p.args.includes(POOL_ENTRY) && !p.args.startsWith("sh "))?.pid;
  }

  /** SIGKILLs `pids` and resolves once each is dead; their deaths are recorded. */
  async killPids(pids: readonly number[], what: string): Promise<void> {
    this.deathWatch.watch(pids);
    signalEach(pids, "SIGKILL");
    await waitFor(async () => pids.every((pid) => this.deaths.has(pid)), `${what} to die`, 5_000, 10);
  }

  /** SIGSTOPs every process of the stack, holds it frozen for `ms`, then SIGCONTs it; the thaw time. */
  async freeze(ms: number): Promise<{ frozenAt: number; thawedAt: number; processes: number }> {
    const pids = this.processes().map((p) => p.pid);
    signalEach(pids, "SIGSTOP");
    const frozenAt = Date.now();
    // The fault is a length of time: holding the freeze is the one wait on the clock here.
    await new Promise((r) => setTimeout(r, ms));
    // On thaw a run whose lease ran out is stopped, and a pool child with it (SIGKILL, no end
    // line): watch every frozen process, so such a run is known to have lasted until its death.
    this.deathWatch.watch(pids);
    signalEach(pids, "SIGCONT");
    return { frozenAt, thawedAt: Date.now(), processes: pids.length };
  }

  /**
   * SIGKILLs every process of the stack at once (no shutdown runs) and resolves once all are dead:
   * when the signals went out (`killedAt`) and when the last process was seen dead (`deadAt`). A run
   * may still write its end line between the two, its finalize never reached.
   */
  async killAll(): Promise<{ killedAt: number; deadAt: number; processes: number }> {
    const pids = this.processes().map((p) => p.pid);
    const killedAt = Date.now();
    await this.killPids(pids, "every stack process");
    this.killed = true;
    const deadAt = Math.max(killedAt, ...pids.map((pid) => this.deaths.get(pid) ?? killedAt));
    return { killedAt, deadAt, processes: pids.length };
  }

  /** Starts `npm start` again on the same data directory and observer log. */
  async restart(): Promise<void> {
    if (!this.killed) throw new Error("restart() follows killAll()");
    this.process = await FaultStack.launch(this.copy, this.logPath, this.dataDir);
    this.killed = false;
  }

  /**
   * Ctrl-C, as a user stops it (or a SIGKILL of what is left, if it does not stop in time). The
   * scenario's directory (observer log, data) is removed, or with `keepEvidence` kept with the
   * stack's output beside it; its path is returned.
   */
  async stop(keepEvidence = false): Promise<string> {
    clearInterval(this.poolRunFollower);
    this.deathWatch.close();
    if (!this.killed && isRunning(this.pid)) {
      const stopped = this.process.interrupt();
      const bound = new Promise((r) => setTimeout(r, 20_000).unref());
      await Promise.race([stopped, bound]);
    }
    signalEach(
      this.processes().map((p) => p.pid),
      "SIGKILL",
    );
    const scratch = dirname(this.logPath);
    if (keepEvidence) writeFileSync(join(scratch, "stack-output.log"), this.output());
    else rmSync(scratch, { recursive: true, force: true });
    return scratch;
  }
}

/** Sends `requests` all at once and gathers the answers in order. */
export function allAtOnce<T>(requests: readonly (() => Promise<T>)[]): Promise<T[]> {
  return Promise.all(requests.map((send) => send()));
}

/**
 * A fault test file's scenarios: one project copy for the file (made before its first scenario,
 * removed after its last; `prepare` makes the file's own edits in it), each scenario on a stack of
 * its own. On failure the stack's output and the observer log are kept, and their folder named.
 */
export function faultScenarios(
  prepare?: (copy: FaultProjectCopy) => void,
): (name: string, scenario: (stack: FaultStack) => Promise<void>) => Promise<void> {
  let copy: FaultProjectCopy | undefined;
  beforeAll(() => {
    const made = makeProjectCopy();
    try {
      prepare?.(made);
    } catch (err) {
      made.remove();
      throw err;
    }
    copy = made;
  });
  afterAll(() => copy?.remove());
  return async (name, scenario) => {
    if (!copy) throw new Error("the project copy is made in beforeAll: run scenarios inside tests");
    const stack = await FaultStack.start(copy, name);
    let failed = true;
    try {
      await scenario(stack);
      failed = false;
    } finally {
      const kept = await stack.stop(failed);
      if (failed) console.error(`[${name}] stack output and observer log kept in ${kept}`);
    }
  };
}

/** A scenario's figures, as one JSON line. */
/** The pool process the stack starts again after `before` died (its restart waits 1 s, then more). */
export const poolRestarted = (stack: FaultStack, before: number) =>
  waitFor(
    async () => {
      const pid = stack.poolPid();
      return pid !== undefined && pid !== before && pid;
    },
    "the stack to start the pool again",
    20_000,
  );

export const report = (scenario: string, figures: Record<string, unknown>) =>
  console.log(JSON.stringify({ scenario, ...figures }));
export const times = <T>(n: number, make: (i: number) => T): T[] =>
  Array.from({ length: n }, (_, i) => make(i));
