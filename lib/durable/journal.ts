import { NonDeterminismError } from "../durable-errors.ts";
import { DurableMisuseError } from "../errors.ts";
import { type StepType, stepNameProblem } from "../job/durable.ts";
import { JournalBounds, type JournalLimits } from "../job/journal-bounds.ts";
import { type StepRecord, stepTypeOf } from "../store/step-record.ts";
import { checkVersionRange, versionToTake } from "./versions.ts";

const article = (type: StepType) =>
  type === "event" ? "an event wait" : type === "version" ? "a ctx.version" : `a ${type}`;

/**
 * What changed between a record and the call a replay meets under its name, or undefined when they
 * agree. `recorded`: the name's record, if any; `type`: the call met; `at`: its place in this run
 * (1 for the handler's first call); `recordedAt`: the name a record of the journal holds at that
 * place, if one does. Only records that keep their type (`op`) are checked for their place: an older
 * one's `n` could be a later place than its call's; a `ctx.version` takes no place.
 */
export function journalChange(
  recorded: StepRecord | undefined,
  type: StepType,
  at: number,
  recordedAt: string | undefined,
): string | undefined {
  if (recorded === undefined)
    return recordedAt === undefined
      ? undefined
      : `is new at place ${at} of the handler's calls, where the journal has "${recordedAt}"`;
  const was = stepTypeOf(recorded);
  if (was !== type) return `was recorded as ${article(was)}, and is now met as ${article(type)}`;
  if (recorded.op !== undefined && type !== "version" && recorded.n !== at)
    return `was recorded at place ${recorded.n} of the handler's calls, and is now met at place ${at}`;
  return undefined;
}

/**
 * One run's walk through its job's journal (docs/guide/durable-jobs.md, "Changing a durable kind
 * safely"): each name the handler meets is checked once per run, counted against the journal's
 * bounds if new, given its place, and compared with its record. A replay that takes another path
 * than the recorded one raises NonDeterminismError, and after it the run may record nothing (`check`).
 */
export class Journal {
  private readonly seen = new Set<string>();
  private readonly bounds: JournalBounds;
  /** The name recorded at each place, of the records that keep their type. */
  private readonly namesAt = new Map<number, string>();
  private met = 0;
  private diverged: Error | undefined;

  private readonly jobId: string;
  private readonly steps: Readonly<Record<string, StepRecord>>;
  private readonly onDiverged: (error: Error) => void;

  /** `steps`: the job's records, as the run holds them; `onDiverged` hears the first divergence. */
  constructor(
    jobId: string,
    steps: Readonly<Record<string, StepRecord>>,
    onDiverged: (error: Error) => void,
    limits?: JournalLimits,
  ) {
    this.jobId = jobId;
    this.steps = steps;
    this.onDiverged = onDiverged;
    this.bounds = new JournalBounds(Object.keys(steps), limits);
    for (const [name, r] of Object.entries(steps))
      if (r.op !== undefined && r.op !== "version") this.namesAt.set(r.n, name);
  }

  /** Ends the run with `error` before anything more is read or recorded (a VersionChangedError). */
  refuse(error: Error): void {
    this.diverged ??= error;
    this.onDiverged(error);
  }

  /** The name checked and taken for this run at its place: its record if an earlier run made one. */
  take(name: string, type: StepType): { recorded: StepRecord | undefined; at: number } {
    this.check();
    // A ctx.version sits between two calls: the place of the call before it, none of its own.
    if (type !== "version") this.met += 1;
    const at = this.met;
    const problem = stepNameProblem(name);
    if (problem) throw new DurableMisuseError(problem);
    if (this.seen.has(name))
      throw new DurableMisuseError(
        `step "${name}" is used twice in one run: each step, sleep and wait needs its own name`,
      );
    this.seen.add(name);
    const recorded = this.steps[name];
    const change = journalChange(recorded, type, at, type === "version" ? undefined : this.namesAt.get(at));
    if (change) this.diverge(name, change);
    const full = recorded ? undefined : this.bounds.admit(name);
    if (full) throw new DurableMisuseError(full);
    return { recorded, at };
  }

  /**
   * `ctx.version(name, range)`: the version this job takes here, and whether it is new (to record, at
   * `at`). A recorded version the range no longer holds is a divergence: this code can't run it.
   */
  takeVersion(name: string, range: readonly [number, number]): { value: number; fresh: boolean; at: number } {
    this.check();
    checkVersionRange(name, range);
    const { recorded, at } = this.take(name, "version");
    const goesPast = Object.values(this.steps).some((r) => r.op !== "version" && r.n > at);
    const taken = versionToTake(recorded, range, goesPast);
    if (taken.value < range[0] || taken.value > range[1])
      this.diverge(
        name,
        `was recorded at version ${taken.value}, outside the handler's ${range[0]}..${range[1]}`,
      );
    return { ...taken, at };
  }

  private diverge(name: string, change: string): never {
    const error = new NonDeterminismError(this.jobId, name, change);
    this.diverged = error;
    this.onDiverged(error);
    throw error;
  }

  /** Throws the run's divergence, if it met one: nothing more of such a run is recorded. */
  check(): void {
    if (this.diverged) throw this.diverged;
  }
}
