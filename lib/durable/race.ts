import { TokenTimeoutError } from "../durable-errors.ts";
import { DurableMisuseError, UnrecoverableError, UsageError } from "../errors.ts";
import { eventKeyProblem, type StepType, sleepProblem } from "../job/durable.ts";
import type { RaceBranch, RaceWon } from "../job/race.ts";
import type { SuspendWaiter } from "../services/suspension.ts";
import { Suspension } from "../services/suspension.ts";
import type { JobItem } from "../store/job-item.ts";
import { decideRace } from "../store/race-ops.ts";
import {
  eventPairOf,
  type RaceBranchRecord,
  type StepRecord,
  type WaitingRecord,
} from "../store/step-record.ts";
import { getToken, type TokenItem } from "../store/token-ops.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { waitSince } from "./event-lookback.ts";
import { loseRace } from "./race-losers.ts";

/**
 * `ctx.waitForAny` (docs/architecture.md §22, "Racing waits"): one entry under the race's name keeps
 * its branches (each token's id, each event's pair, each timer's end) and its deadline (`until`: the
 * earliest timer's end, else the earliest token's timeout); the suspend waits on all of them at once
 * (`waiting: { for: "any", tokens, pairs }`, one event pointer per event branch). The first to win
 * writes the branch's name (`w`) into the entry, once:
 * - an event: its resume's own write (resumeWaiting finds its pair among `waiting.pairs`), with its
 *   data; the event's delivery then cancels the other branches at once (lib/durable/race-losers.ts);
 * - a token: its completion resumes the job (its token among `waiting.tokens`); the run that meets
 *   the race finds it completed and writes the win (decideRace), then cancels the others;
 * - a timer: the reaper wakes the job at the deadline; the run writes the win the same way.
 * decideRace holds only while the entry has no winner, so an event's resume and a run's decision
 * never both win; a replay reads `w` and returns the same branch, whatever has happened since.
 */
/** The smallest race: two branches. */
export const MIN_RACE_BRANCHES = 2;

/**
 * Why a race can't be run, each the same on every attempt: a DurableMisuseError naming the call
 * (`waitForAny "<name>"`) and the branch. A race of events only has no end: it needs a timer or a token.
 */
export function checkRace(name: string, branches: readonly RaceBranch[]): void {
  const call = `waitForAny "${name}"`;
  if (!Array.isArray(branches) || branches.length < MIN_RACE_BRANCHES)
    throw new DurableMisuseError(`${call}: a race needs at least ${MIN_RACE_BRANCHES} branches`);
  const seen = new Set<string>();
  for (const b of branches) {
    const kind = (b as { kind?: unknown } | undefined)?.kind;
    if (kind !== "token" && kind !== "event" && kind !== "timer")
      throw new DurableMisuseError(`${call}: each branch is ctx.token(…), ctx.event(…) or ctx.timer(…)`);
    if (typeof b.name !== "string" || b.name.length === 0 || b.name.length > 256)
      throw new DurableMisuseError(`${call}: a branch's name must be 1..256 characters`);
    if (seen.has(b.name)) throw new DurableMisuseError(`${call}: two branches are named "${b.name}"`);
    seen.add(b.name);
    if (b.kind === "timer") {
      const problem = sleepProblem(b.name, b.seconds);
      if (problem) throw new DurableMisuseError(`${call}: timer ${problem.replace(/^sleep /, "")}`);
    }
    if (b.kind === "token" && typeof b.token?.id !== "string")
      throw new DurableMisuseError(`${call}: branch "${b.name}" needs a token from ctx.createToken`);
    if (
      b.kind === "event" &&
      (typeof b.event !== "string" || b.event.length === 0 || typeof b.match !== "string")
    )
      throw new DurableMisuseError(
        `${call}: branch "${b.name}": event must be a non-empty string and match a string`,
      );
  }
  if (!branches.some((b) => b.kind !== "event"))
    throw new DurableMisuseError(`${call}: a race of events only never ends: add a timer or a token`);
}

/** What of the run a race uses (lib/durable/durable-run.ts's DurableRun). */
export interface RaceRun {
  readonly deps: DurableDeps;
  readonly item: JobItem;
  readonly fence: string;
  take(name: string, type: StepType): { recorded: StepRecord | undefined; at: number };
  record(at: number, op: StepType, fields: Omit<StepRecord, "n" | "op" | "a" | "t">): StepRecord;
  write(name: string, record: StepRecord): Promise<StepRecord>;
  read(name: string, record: StepRecord): Promise<unknown>;
  wait(s: Suspension): Promise<never>;
  stillOurs(): void;
  /** Whether the job item has a steps map yet, as the run knows now. */
  readonly mapExists: boolean;
}

export async function waitForAny<const B extends readonly RaceBranch[]>(
  run: RaceRun,
  name: string,
  branches: B,
): Promise<RaceWon<B[number]>> {
  checkRace(name, branches);
  for (const b of branches) {
    if (b.kind !== "event") continue;
    const keyProblem = eventKeyProblem(b.event, b.match);
    if (keyProblem)
      throw new UnrecoverableError(
        `waitForAny "${name}": branch "${b.name}": its ${keyProblem.at} ${keyProblem.problem}`,
      );
  }
  const { recorded, at } = run.take(name, "race");
  if (recorded?.w !== undefined) return won(run, name, recorded, branches);
  run.stillOurs();
  const now = run.deps.clock.now();
  const tokens = await tokensOf(run, name, branches);
  const entry = recorded ?? run.record(at, "race", raceRecord(branches, tokens, now));
  const done = [...tokens.entries()]
    .filter(([, t]) => t.status === "completed")
    .sort(([, x], [, y]) => (x.completedAt ?? 0) - (y.completedAt ?? 0))[0];
  if (done) {
    const [branch, token] = done;
    const body = token.v !== undefined ? { v: token.v } : token.o !== undefined ? { o: token.o } : {};
    return decide(run, name, recorded, entry, { w: branch, ...body }, branches);
  }
  const until = entry.until ?? now;
  const race = entry.race ?? [];
  if (until <= now) {
    const timer = race
      .filter((b) => b.until !== undefined)
      .sort((x, y) => (x.until ?? 0) - (y.until ?? 0))[0];
    if (timer) return decide(run, name, recorded, entry, { w: timer.b }, branches);
    const late = [...tokens.values()].sort((x, y) => x.timeoutAt - y.timeoutAt)[0];
    throw new TokenTimeoutError(
      late?.step ?? name,
      `waitForAny "${name}": its tokens timed out, no branch won`,
    );
  }
  const pairs = race
    .filter((b) => b.event !== undefined)
    .map((b) => eventPairOf(b.event ?? "", b.match ?? ""));
  const ids = race.flatMap((b) => (b.token !== undefined ? [b.token] : []));
  const waiting: WaitingRecord = {
    for: "any",
    until,
    ...(ids.length > 0 ? { tokens: ids } : {}),
    ...(pairs.length > 0 ? { pairs } : {}),
  };
  const waiters: SuspendWaiter[] = branches.flatMap((b) =>
    b.kind === "event"
      ? [
          {
            event: b.event,
            match: b.match,
            step: name,
            since: waitSince(run.deps.app, b.event, entry.t, b.since),
            branch: b.name,
          },
        ]
      : [],
  );
  const step = recorded ? undefined : { name, record: entry, mapExists: run.mapExists };
  return run.wait(new Suspension(waiting, step, undefined, [], waiters));
}

/** Each token branch's token, read now; one of another job is a misuse. */
async function tokensOf(run: RaceRun, name: string, branches: readonly RaceBranch[]) {
  const tokens = new Map<string, TokenItem>();
  for (const b of branches) {
    if (b.kind !== "token") continue;
    const token = await getToken(run.deps.store, b.token.id);
    if (!token || token.jobId !== run.item.id)
      throw new DurableMisuseError(
        `waitForAny "${name}": branch "${b.name}": token ${b.token.id} is not one of this job's tokens`,
      );
    tokens.set(b.name, token);
  }
  return tokens;
}

/** A new race's entry: its branches, and its deadline. */
function raceRecord(branches: readonly RaceBranch[], tokens: ReadonlyMap<string, TokenItem>, now: number) {
  const race: RaceBranchRecord[] = branches.map((b) => {
    if (b.kind === "token") return { b: b.name, token: b.token.id };
    if (b.kind === "event") return { b: b.name, event: b.event, match: b.match };
    return { b: b.name, until: now + Math.round(b.seconds * 1000) };
  });
  const timers = race.flatMap((b) => (b.until !== undefined ? [b.until] : []));
  const timeouts = [...tokens.values()].map((t) => t.timeoutAt);
  return { race, until: Math.min(...(timers.length > 0 ? timers : timeouts)) };
}

/**
 * The race is won by `won.w` (a token's data in v or o): recorded with the entry (a race met the
 * first time), or into the entry an earlier run wrote (decideRace: an event's resume may have won
 * first, and then its branch is the one). Then the other branches are cancelled.
 */
async function decide<B extends readonly RaceBranch[]>(
  run: RaceRun,
  name: string,
  recorded: StepRecord | undefined,
  entry: StepRecord,
  win: Pick<StepRecord, "w" | "v" | "o">,
  branches: B,
): Promise<RaceWon<B[number]>> {
  let record: StepRecord | undefined;
  if (!recorded) record = await run.write(name, { ...entry, ...win });
  else {
    const out = await decideRace(run.deps.store, run.item.id, run.fence, name, win);
    record = out.decided ? { ...recorded, ...win } : out.record;
  }
  if (record?.w === undefined)
    throw new UsageError(`waitForAny "${name}" was not decided: this run lost its lease`);
  await loseRace(run.deps, { id: run.item.id, steps: { [name]: record } }, name, record.w);
  return won(run, name, record, branches);
}

/** The recorded winner, with its data (checked by its branch's schema). */
async function won<B extends readonly RaceBranch[]>(
  run: RaceRun,
  name: string,
  record: StepRecord,
  branches: B,
): Promise<RaceWon<B[number]>> {
  const branch = branches.find((b) => b.name === record.w);
  if (branch?.kind === "timer" || (record.v === undefined && record.o === undefined))
    return { branch: record.w } as RaceWon<B[number]>;
  const data = await run.read(name, record);
  const checked = branch?.schema ? branch.schema.parse(data) : data;
  return { branch: record.w, data: checked } as RaceWon<B[number]>;
}
