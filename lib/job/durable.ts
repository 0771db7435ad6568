import type * as z from "zod";
import { DurableMisuseError } from "../errors.ts";
import { eventWaiterWrites, storedKeyProblem } from "./key-layout.ts";
import type { ParallelOptions, ParallelResults } from "./parallel.ts";
import type { EventBranch, RaceBranch, RaceToken, RaceWon, TimerBranch, TokenBranch } from "./race.ts";
import type { JobStatus } from "./status.ts";

/**
 * Durable steps, sleeps and waits (docs/architecture.md §22): what a handler calls, and the limits
 * the runtime checks. The handler runs from the top on every run of its job; a recorded step returns
 * its recorded result instead of running again.
 */

/** A step's, sleep's or wait's name: unique within its job, 1..256 characters. */
export const MAX_STEP_NAME_CHARS = 256;

/** The longest sleep or wait: a year. */
export const MAX_SLEEP_SECONDS = 365 * 86_400;

/** A token the handler made (`ctx.createToken`): complete it with `POST <url>` and `{ "data": … }`. */
export interface WaitToken {
  id: string;
  /** Carries the token's single-use secret: whoever holds it can complete this token, nothing else. */
  url: string;
}

export interface TokenOptions {
  /** How long the token may wait for its completion; then `waitForToken` throws TokenTimeoutError. */
  timeoutSeconds: number;
}

export interface EventWait<T = unknown> {
  /** The event's name, as POST /events gives it. */
  event: string;
  /** The value an event must carry in `match` to resume this wait (an order's id, a user's). */
  match: string;
  timeoutSeconds: number;
  /** Checks and types the event's data; `unknown` without it. */
  schema?: z.ZodType<T>;
  /**
   * "lookback" (the default): an event that came within its name's lookback before the wait began
   * resumes it too. "wait": only one that comes after the wait began.
   */
  since?: "lookback" | "wait";
}

/** `ctx.invoke`'s options (docs/guide/durable-jobs.md, "Child jobs"). */
export interface InvokeOptions {
  /** The child step's name in this job; the child's kind when left out. */
  name?: string;
}

/** `ctx.invokeMany`'s options: at most `concurrency` (1..100, 10 when left out) children not yet ended at once. */
export interface InvokeManyOptions extends InvokeOptions {
  concurrency?: number;
}

/**
 * A step's own retries, within one run (docs/guide/durable-jobs.md, "Retries"): `fn` is called again
 * after `backoffSeconds` (doubling) while it throws, up to `retries` more times, before the job's
 * attempt fails. Both default to 0: a job's attempts are its steps' retries.
 */
export interface StepOptions {
  /** 0..10 more calls of the step's function in the same run. */
  retries?: number;
  /** 0..30 s before the first retry, doubling after each. */
  backoffSeconds?: number;
}

/** The durable half of a handler's context; each name is recorded once per job. */
export interface DurableContext {
  /** Runs `fn` once per job: a later run returns its recorded result (JSON, ≤ 1 MiB). */
  step<T>(name: string, fn: () => Promise<T> | T, options?: StepOptions): Promise<T>;
  /** Ends the run, which resumes after `seconds` (0..365 days) with its steps replayed. */
  sleep(name: string, seconds: number): Promise<void>;
  sleepUntil(name: string, until: Date): Promise<void>;
  /** A token a third party completes; recorded like a step, so a rerun gets the same one. */
  createToken(name: string, options: TokenOptions): Promise<WaitToken>;
  /** Ends the run until the token is completed, then returns its data (TokenTimeoutError on timeout). */
  waitForToken<T = unknown>(token: WaitToken, options?: { schema?: z.ZodType<T> }): Promise<T>;
  /** Ends the run until a matching event arrives, then returns its data (EventTimeoutError on timeout). */
  waitForEvent<T = unknown>(name: string, wait: EventWait<T>): Promise<T>;
  /** A race's branch (`waitForAny`): the token's completion wins, with its data. */
  token<const N extends string, T = unknown>(
    name: N,
    token: RaceToken,
    options?: { schema?: z.ZodType<T> },
  ): TokenBranch<N, T>;
  /** A race's branch: a matching event wins, with its data (kept ones within the lookback too). */
  event<const N extends string, T = unknown>(
    name: N,
    wait: Omit<EventWait<T>, "timeoutSeconds">,
  ): EventBranch<N, T>;
  /** A race's branch: it wins when `seconds` (0..365 days) have passed, with no data. */
  timer<const N extends string>(name: N, seconds: number): TimerBranch<N>;
  /**
   * Ends the run until the first of its branches (at least two, each named once) wins, then returns
   * `{ branch, data }`; the others are cancelled (a losing token answers 409, an event's waiter goes).
   */
  waitForAny<const B extends readonly RaceBranch[]>(name: string, branches: B): Promise<RaceWon<B[number]>>;
  /**
   * Enqueues a child job once per job, ends the run until it ends, then returns its result (or throws
   * ChildJobError). An app's kinds see it typed by the child's kind (lib/declarations/define-app.ts).
   */
  invoke(kind: string, payload: unknown, options?: InvokeOptions): Promise<unknown>;
  /** One child per payload, its step `name[i]`; all awaited, their results in the payloads' order. */
  invokeMany(kind: string, payloads: readonly unknown[], options?: InvokeManyOptions): Promise<unknown[]>;
  /**
   * Which version of the code at this point the job takes, `from`..`to` (whole numbers): `to` for a
   * job that reaches it first under this code, `from` for one whose journal went past it without
   * it; recorded once per job, so each run of the job takes the same branch (docs/guide/durable-jobs.md,
   * "Versions"). Takes no place among the handler's calls.
   */
  version(name: string, range: readonly [from: number, to: number]): Promise<number>;
  /**
   * Runs each function as a step named `<name>[<index>]`, at most `concurrency` (1..100, default 10)
   * at a time, and returns their results in order; one failing fails the call (ParallelStepError)
   * once the others have settled, and a retry runs only the steps not recorded.
   */
  parallel<const F extends readonly (() => unknown)[]>(
    name: string,
    fns: F,
    options?: ParallelOptions,
  ): Promise<ParallelResults<F>>;
  /** `parallel` over items (at most 1 000): `fn(item, index)` as the step `<name>[<index>]`. */
  map<I, T>(
    name: string,
    items: readonly I[],
    fn: (item: I, index: number) => Promise<T> | T,
    options?: ParallelOptions,
  ): Promise<T[]>;
}

/** A wait token as GET /tokens/{id} shows it, never its secret. */
export interface TokenView {
  id: string;
  jobId: string;
  /** The token step's name in its job. */
  step: string;
  /** A pending token whose job ended is `cancelled`; one past its timeout, `timed-out`. */
  status: "pending" | "completed" | "timed-out" | "cancelled";
  createdAt: string;
  timeoutAt: string;
  completedAt?: string;
  data?: unknown;
}

/** What a waiting job waits for, as GET /jobs/{id} shows it. */
export interface WaitingView {
  for: "sleep" | "token" | "event" | "any" | "child";
  until?: string;
  token?: string;
  event?: string;
  match?: string;
  /** The child job a `ctx.invoke` waits for. */
  child?: string;
}

/** What a journal's record was: the call that made it. Each record keeps its type, checked on replay. */
export const stepTypes = ["step", "sleep", "token", "event", "race", "child", "version"] as const;
export type StepType = (typeof stepTypes)[number];

/** One recorded step, as GET /jobs/{id}/steps lists it. */
export interface StepView {
  name: string;
  type: StepType;
  /** done: recorded (a sleep that has passed, an event that arrived); sleeping, waiting, timed-out. */
  status: "done" | "sleeping" | "waiting" | "timed-out";
  attempt: number;
  at: string;
  /** Its place among the handler's calls (journal checks); absent for a record older than them. */
  place?: number;
  until?: string;
  /** A race's winning branch (`ctx.waitForAny`). */
  won?: string;
  /** A child step's job id (`ctx.invoke`). */
  child?: string;
  result?: unknown;
}

/**
 * GET /jobs/{id}/steps: a durable job's recorded steps in the handler's order, and what it waits for
 * while suspended (docs/guide/durable-jobs.md).
 */
export interface JobSteps {
  jobId: string;
  status: JobStatus;
  waiting?: WaitingView;
  steps: StepView[];
}

/**
 * GET /jobs?waiting=true's answer: suspended durable jobs per queue, kind and version (absent: a
 * journal started before versions were recorded), largest first (docs/guide/durable-jobs.md, "Versions").
 */
export interface WaitingCounts {
  waiting: { queue: string; kind: string; version?: string; jobs: number }[];
  /** false when the count stopped at its bound: the numbers are then at least these. */
  complete: boolean;
}

/** POST /tokens/{id}'s answer: the token completed, and whether its waiting job was resumed now. */
export interface TokenCompleted {
  id: string;
  jobId: string;
  status: "completed";
  resumed: boolean;
}

/** POST /events' answer: how many jobs it resumed; `continuation` when waiters are left: send it again with it. */
export interface EventDelivery {
  resumed: number;
  continuation?: string;
}

/** Why a step name can't be used, or undefined when it can. */
export function stepNameProblem(name: unknown): string | undefined {
  if (typeof name !== "string" || name.length === 0) return "a step name must be a non-empty string";
  if (name.length > MAX_STEP_NAME_CHARS)
    return `step name "${name.slice(0, 40)}…" is over ${MAX_STEP_NAME_CHARS} characters`;
  return undefined;
}

/**
 * A step's result as its JSON. A value JSON can't hold (a BigInt, a cycle, a function) fails the same
 * way on every attempt: a DurableMisuseError naming the step.
 */
export function stepResultJson(name: string, value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new DurableMisuseError(`step "${name}" returned a value JSON can't hold: ${why}`);
  }
  if (json === undefined)
    throw new DurableMisuseError(`step "${name}" returned a value JSON can't hold: a ${typeof value}`);
  return json;
}

/** Why a sleep of `seconds` can't be (0..365 days), or undefined when it can. */
export function sleepProblem(name: string, seconds: number): string | undefined {
  if (Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_SLEEP_SECONDS) return undefined;
  return `sleep "${name}": ${seconds} s is outside 0..${MAX_SLEEP_SECONDS} s (365 days)`;
}

/** Why a token's or an event wait's timeout can't be (`call` names it), or undefined when it can. */
export function timeoutProblem(call: string, seconds: number): string | undefined {
  if (Number.isFinite(seconds) && seconds > 0 && seconds <= MAX_SLEEP_SECONDS) return undefined;
  return `${call}: timeoutSeconds must be within 1..${MAX_SLEEP_SECONDS}`;
}

/** What an event wait or an event names (POST /events' `name` and `match`), where a problem was found. */
export interface EventKeyProblem {
  /** The value at fault: the event's name, its match, or the two together (their key's size). */
  at: "event" | "match" | "both";
  /**
   * What is wrong, to follow the value's name: "contains a lone surrogate…" after "its match", or
   * "takes 2049 bytes…" after "the key of its name and match".
   */
  problem: string;
}

/**
 * Why an event's name and match can't be its waiters' key in the table, or undefined. The pair is
 * the partition key the store writes a wait under and POST /events queries (storedKeyProblem): each
 * value well-formed, the two URI-encoded together within DynamoDB's 2 048 bytes. A wait's match
 * often comes from its job's data (an order's id), so this is met inside a run as well as in a
 * request. Both values are 1..MAX_STEP_NAME_CHARS characters, as POST /events takes them: a wait
 * on any other could never be resumed.
 */
export function eventKeyProblem(event: string, match: string): EventKeyProblem | undefined {
  for (const [at, value] of [
    ["event", event],
    ["match", match],
  ] as const) {
    if (value.length === 0 || value.length > MAX_STEP_NAME_CHARS)
      return {
        at,
        problem: `is ${value.length} characters; an event's name and match are 1..${MAX_STEP_NAME_CHARS}, so no event could match it`,
      };
  }
  const problem = storedKeyProblem([event, match], eventWaiterWrites);
  if (problem === undefined) return undefined;
  const at = !event.isWellFormed() ? "event" : !match.isWellFormed() ? "match" : "both";
  return { at, problem };
}
