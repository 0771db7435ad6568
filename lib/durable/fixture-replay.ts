import { EventTimeoutError, NonDeterminismError, TokenTimeoutError } from "../durable-errors.ts";
import { DurableMisuseError } from "../errors.ts";
import type { DurableContext, StepType, WaitToken } from "../job/durable.ts";
import type { FixtureOp, JournalFixture } from "../job/journal-fixture.ts";
import type { AnyKind, JobContext, KindDefinition } from "../job/kind.ts";
import { kindReady } from "../job/kind-loading.ts";
import { raceBranches } from "../job/race.ts";
import { silentLog } from "../observability/log.ts";
import type { StepRecord } from "../store/step-record.ts";
import { type ChildOutcome, childValue } from "./child-end.ts";
import { childStepName } from "./invoke-many.ts";
import { Journal } from "./journal.ts";
import { parallelSteps } from "./parallel.ts";
import { checkRace } from "./race.ts";

/**
 * A recorded journal fixture replayed offline (docs/guide/durable-jobs.md, "Changing a durable kind
 * safely"): the kind's handler runs from the top with a context whose calls answer from the
 * fixture's records, each name checked by the run time's own Journal (the code that raises
 * NonDeterminismError when a resumed job took another path). No step function runs, nothing is
 * read or written: a recorded call returns its recorded result, and the first call past the
 * recording (a new name, or the wait a suspended job is in) ends the replay there.
 */

export type ReplayOutcome =
  /**
   * Every call the handler made matched its record: it ended, or stopped at `stop` (the wait the
   * job is suspended in, a new call past the recording, or a call that reaches the world). `unmet`:
   * recorded calls it went past without making (a step removed), when it ended or met a new call.
   */
  | { as: "matches"; stop?: ReplayStop; unmet: string[]; versions: Record<string, number> }
  /** A call took another path than the recording: what the run time would raise. */
  | { as: "diverged"; error: NonDeterminismError }
  /** The handler's replay ended in a misuse the recorded run did not meet (a name used twice...). */
  | { as: "misuse"; error: DurableMisuseError }
  /** The recorded payload fails the kind's schema as it now stands. */
  | { as: "payload"; problem: string }
  /** The handler neither ended nor reached a call within the bound (it waits on something offline can't give). */
  | { as: "unsettled"; boundMs: number };

/** Where a replay stopped: its call's name (none for a call outside the journal), and why. */
export interface ReplayStop {
  name?: string;
  why: "waiting" | "new" | "outside";
}

/** A record of the fixture's op, as the job item kept it: `op` and place when the view showed one. */
function recordOf(o: FixtureOp, index: number): StepRecord {
  const base = { n: o.place ?? index + 1, a: 1, t: 0 };
  const v = o.op === "version" ? { v: JSON.stringify(o.result ?? null) } : {};
  if (o.place !== undefined) return { ...base, op: o.op, ...v };
  // An older record, read by its fields (stepTypeOf): the field that tells its type, and no place checked.
  const marks: Partial<Record<StepType, Partial<StepRecord>>> = {
    sleep: { until: 0 },
    token: { token: "" },
    event: { event: "" },
    child: { child: "" },
    race: { race: [] },
  };
  return { ...base, ...(marks[o.op] ?? {}), ...v };
}

/** The replay's run: the journal, the fixture's ops by name, and where it stopped. */
class ReplayRun {
  readonly journal: Journal;
  readonly ops = new Map<string, FixtureOp>();
  readonly taken = new Set<string>();
  readonly versions: Record<string, number> = {};
  /** Set by the first call past the recording: the replay ends there. */
  stopped: ReplayStop | undefined;
  private stop!: () => void;
  readonly stoppedAt = new Promise<void>((resolve) => {
    this.stop = resolve;
  });
  diverged: Error | undefined;
  /** Whether the recorded job had ended (not suspended): a wait it timed out in, it met. */
  readonly ended: boolean;

  readonly fixture: JournalFixture;

  constructor(fixture: JournalFixture) {
    this.fixture = fixture;
    this.ended = fixture.status !== "scheduled";
    const records: Record<string, StepRecord> = {};
    fixture.ops.forEach((o, i) => {
      records[o.name] = recordOf(o, i);
      this.ops.set(o.name, o);
    });
    this.journal = new Journal(fixture.jobId, records, (e) => {
      this.diverged ??= e;
    });
  }

  /** The name taken as the run time takes it; its fixture op if recorded. */
  take(name: string, type: StepType): FixtureOp | undefined {
    const { recorded } = this.journal.take(name, type);
    this.taken.add(name);
    return recorded ? this.ops.get(name) : undefined;
  }

  /** The end of the recording: this call and everything after it never returns. */
  end(why: ReplayStop["why"], name?: string): Promise<never> {
    this.stopped ??= { why, ...(name !== undefined ? { name } : {}) };
    this.stop();
    return new Promise<never>(() => {});
  }
}

function durableContext(run: ReplayRun): DurableContext {
  const step = async <T>(name: string, _fn: unknown): Promise<T> => {
    const op = run.take(name, "step");
    return op ? (structuredClone(op.result) as T) : run.end("new", name);
  };
  const sleep = async (name: string): Promise<void> => {
    const op = run.take(name, "sleep");
    if (!op) return run.end("new", name);
    if (op.status === "sleeping") return run.end("waiting", name);
  };
  /** A recorded call, or the recording's end: the wait it was in, or a new one. */
  const endAt = (name: string, op: FixtureOp | undefined) => run.end(op ? "waiting" : "new", name);
  const invokeOne = (step: string, op: FixtureOp | undefined): unknown =>
    childValue(step, op?.child ?? "", op?.result as ChildOutcome);
  return {
    step: (name, fn) => step(name, fn),
    sleep: (name) => sleep(name),
    sleepUntil: (name) => sleep(name),
    createToken: async (name) => {
      const op = run.take(name, "token");
      return op ? (op.result as WaitToken) : run.end("new", name);
    },
    waitForToken: async (token, options) => {
      run.journal.check();
      const data = run.fixture.tokens?.[token.id];
      if (data === undefined) return run.end("waiting");
      return (options?.schema ? options.schema.parse(data) : data) as never;
    },
    waitForEvent: async (name, wait) => {
      const op = run.take(name, "event");
      // Timed out in a job that ended: its run met the timeout. In a suspended one, it is yet to wake.
      if (op?.status === "timed-out" && run.ended)
        throw new EventTimeoutError(name, `no "${wait.event}" event came in time`);
      if (op?.status !== "done") return endAt(name, op);
      return (wait.schema ? wait.schema.parse(op.result) : op.result) as never;
    },
    ...raceBranches,
    waitForAny: async (name, branches) => {
      checkRace(name, branches);
      const op = run.take(name, "race");
      if (op?.status === "timed-out" && run.ended)
        throw new TokenTimeoutError(name, `waitForAny "${name}": no branch won`);
      if (op?.won === undefined) return endAt(name, op);
      const branch = branches.find((b) => b.name === op.won);
      const data = branch?.kind !== "timer" && branch?.schema ? branch.schema.parse(op.result) : op.result;
      return (branch?.kind === "timer" ? { branch: op.won } : { branch: op.won, data }) as never;
    },
    invoke: async (kind, _payload, options) => {
      const name = options?.name ?? kind;
      const op = run.take(name, "child");
      return op?.result === undefined ? endAt(name, op) : invokeOne(name, op);
    },
    invokeMany: async (kind, payloads, options) => {
      const name = options?.name ?? kind;
      const ops = Array.from(payloads, (_, i) => run.take(childStepName(name, i), "child"));
      const open = ops.findIndex((op) => op?.result === undefined);
      if (open !== -1) return endAt(childStepName(name, open), ops[open]);
      return ops.map((op, i) => invokeOne(childStepName(name, i), op));
    },
    version: async (name, range) => {
      const { value } = run.journal.takeVersion(name, range);
      run.taken.add(name);
      run.versions[name] = value;
      return value;
    },
    ...parallelSteps({ step, suspending: () => run.stopped !== undefined, mapExists: () => true }),
  };
}

/** The handler's whole context: the durable calls from the fixture; the rest inert, or the recording's end. */
function replayContext(
  run: ReplayRun,
  kind: Pick<KindDefinition, "name" | "queue" | "maxAttempts">,
): JobContext {
  const f = run.fixture;
  return {
    ...durableContext(run),
    job: {
      id: f.jobId,
      kind: kind.name,
      queue: kind.queue,
      maxAttempts: kind.maxAttempts,
      createdAt: f.recordedAt,
    },
    attempt: 1,
    signal: new AbortController().signal,
    log: silentLog,
    heartbeat: async () => {},
    // Outside a step these reach the world on every run: offline, the replay ends where they are called.
    rateLimit: () => run.end("outside"),
    enqueue: () => run.end("outside"),
    group: () => run.end("outside"),
    // Streamed output is no journal record: offline, it goes nowhere and the replay goes on.
    stream: () => ({ write: async () => {}, close: async () => {} }),
  };
}

/** Turns of the event loop given to calls side by side after the replay's end, so each is checked too. */
const DRAIN_TURNS = 5;

/**
 * Replays `fixture` against `kind`'s handler as it now stands. `boundMs`: how long the handler may
 * take to end or reach the recording's end (a handler awaiting something outside its calls).
 */
export async function replayFixture(
  kind: Pick<KindDefinition, "name" | "queue" | "maxAttempts" | "payload" | "handler" | "load">,
  fixture: JournalFixture,
  boundMs = 5_000,
): Promise<ReplayOutcome> {
  // A kind whose module loads on first use loads now (lib/job/kind-loading.ts).
  await kindReady(kind as AnyKind);
  const parsed = kind.payload.safeParse(fixture.payload);
  if (!parsed.success)
    return {
      as: "payload",
      problem: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "),
    };
  const run = new ReplayRun(fixture);
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<"unsettled">((resolve) => {
    timer = setTimeout(() => resolve("unsettled"), boundMs);
  });
  const handled = (async () => kind.handler(parsed.data, replayContext(run, kind)))().then(
    () => "returned" as const,
    (error: unknown) => error,
  );
  const first = await Promise.race([handled, run.stoppedAt.then(() => "stopped" as const), bound]);
  clearTimeout(timer);
  for (let turn = 0; turn < DRAIN_TURNS; turn++) await new Promise((resolve) => setImmediate(resolve));
  if (run.diverged instanceof NonDeterminismError) return { as: "diverged", error: run.diverged };
  if (first === "unsettled") return { as: "unsettled", boundMs };
  if (first instanceof NonDeterminismError) return { as: "diverged", error: first };
  const misuse = first instanceof DurableMisuseError ? first : (first as { cause?: unknown })?.cause;
  if (misuse instanceof DurableMisuseError) return { as: "misuse", error: misuse };
  // A handler ending in another error (a child's ChildJobError, a wait's timeout) ends as its recorded run did.
  const stop = run.stopped;
  const passed = stop === undefined || stop.why === "new";
  const unmet = passed ? fixture.ops.map((o) => o.name).filter((name) => !run.taken.has(name)) : [];
  return { as: "matches", ...(stop ? { stop } : {}), unmet, versions: run.versions };
}
