import type * as z from "zod";

/**
 * Racing waits (`ctx.waitForAny`, docs/guide/durable-jobs.md "Racing waits"): a wait on several
 * branches at once, each named, that ends on the first. A branch is a plain value the handler builds
 * with `ctx.token`, `ctx.event` or `ctx.timer`; nothing is recorded until `waitForAny` takes them.
 */

/** A token from `ctx.createToken` (a WaitToken): its id is what the race waits on. */
export interface RaceToken {
  id: string;
  url: string;
}

/** The token's completion wins: its data, checked by `schema` when given. */
export interface TokenBranch<N extends string = string, T = unknown> {
  kind: "token";
  name: N;
  token: RaceToken;
  schema?: z.ZodType<T>;
}

/** An event of that name and match wins (one kept for its lookback too, unless `since: "wait"`). */
export interface EventBranch<N extends string = string, T = unknown> {
  kind: "event";
  name: N;
  event: string;
  match: string;
  schema?: z.ZodType<T>;
  since?: "lookback" | "wait";
}

/** The race's time runs out after `seconds` (0..365 days): this branch wins, with no data. */
export interface TimerBranch<N extends string = string> {
  kind: "timer";
  name: N;
  seconds: number;
}

export type RaceBranch = TokenBranch<string, unknown> | EventBranch<string, unknown> | TimerBranch;

/** What `waitForAny` returns: the winning branch's name, and its data (a timer has none). */
export type RaceWon<B> =
  B extends TimerBranch<infer N>
    ? { branch: N }
    : B extends TokenBranch<infer N, infer T> | EventBranch<infer N, infer T>
      ? { branch: N; data: T }
      : never;

/** The branch builders on the context. */
export const raceBranches = {
  token: <const N extends string, T = unknown>(
    name: N,
    token: RaceToken,
    options?: { schema?: z.ZodType<T> },
  ): TokenBranch<N, T> => ({
    kind: "token",
    name,
    token,
    ...(options?.schema ? { schema: options.schema } : {}),
  }),
  event: <const N extends string, T = unknown>(
    name: N,
    wait: { event: string; match: string; schema?: z.ZodType<T>; since?: "lookback" | "wait" },
  ): EventBranch<N, T> => ({ kind: "event", name, ...wait }),
  timer: <const N extends string>(name: N, seconds: number): TimerBranch<N> => ({
    kind: "timer",
    name,
    seconds,
  }),
};
