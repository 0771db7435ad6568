import { describe, expect, test } from "vitest";
import { NonDeterminismError, ParallelStepError } from "../../lib/durable-errors.ts";
import {
  DurableMisuseError,
  RetryAfterError,
  ThrottledError,
  UnrecoverableError,
  UsageError,
} from "../../lib/errors.ts";
import { MAX_DELAY_SECONDS, MAX_VISIBILITY_SECONDS } from "../../lib/limits.ts";
import { backoffSeconds } from "../../lib/runtime/backoff.ts";
import { decideOutcome, MAX_RESULT_BYTES, type OutcomeInput } from "../../lib/runtime/outcome.ts";
import { withoutClaim } from "../../lib/runtime/outcome-table.ts";

const backoff = { baseSeconds: 2, maxSeconds: 3600 };
const input = (over: Partial<OutcomeInput> = {}): OutcomeInput => ({
  attempt: 1,
  maxAttempts: 3,
  backoff,
  timeoutSeconds: 30,
  random: () => 0,
  ...over,
});

describe("decideOutcome", () => {
  test("success → done with the JSON result", () => {
    expect(decideOutcome({ ok: true, value: { n: 1, s: "x" } }, input())).toEqual({
      outcome: "done",
      result: '{"n":1,"s":"x"}',
    });
  });

  test("success with no value → done with null", () => {
    expect(decideOutcome({ ok: true, value: undefined }, input())).toEqual({
      outcome: "done",
      result: "null",
    });
  });

  test("a result over the size budget → dead, never retried", () => {
    const big = "x".repeat(MAX_RESULT_BYTES);
    const d = decideOutcome({ ok: true, value: big }, input({ attempt: 1 }));
    expect(d.outcome).toBe("dead");
    expect(d).toMatchObject({ error: expect.stringContaining(`${MAX_RESULT_BYTES} bytes`) });
  });

  test("a result exactly at the budget is still done", () => {
    const atLimit = "x".repeat(MAX_RESULT_BYTES - 2); // plus two quotes
    expect(decideOutcome({ ok: true, value: atLimit }, input()).outcome).toBe("done");
  });

  test("UnrecoverableError → dead at once, even with attempts left", () => {
    expect(
      decideOutcome({ ok: false, error: new UnrecoverableError("no such user") }, input({ attempt: 1 })),
    ).toEqual({
      outcome: "dead",
      error: "no such user",
    });
  });

  test("DurableMisuseError → dead at once; a plain UsageError (a lost lease's) is retried", () => {
    const misuse = new DurableMisuseError('step "a" is used twice in one run');
    expect(decideOutcome({ ok: false, error: misuse }, input({ attempt: 1 }))).toEqual({
      outcome: "dead",
      error: 'step "a" is used twice in one run',
    });
    const lost = new UsageError('step "a" was not recorded: this run lost its lease');
    expect(decideOutcome({ ok: false, error: lost }, input({ attempt: 1 })).outcome).toBe("retry");
    expect(decideOutcome({ ok: false, abort: "lease_lost", error: misuse }, input())).toEqual({
      outcome: "abandon",
    });
  });

  test("NonDeterminismError → paused for an operator on any attempt, never retried or dead", () => {
    const diverged = new NonDeterminismError("j1", "b", "was recorded as a sleep, and is now met as a step");
    for (const attempt of [1, 3])
      expect(decideOutcome({ ok: false, error: diverged }, input({ attempt, maxAttempts: 3 }))).toEqual({
        outcome: "paused",
        error: diverged.message,
      });
  });

  test("a parallel step's error (ParallelStepError) → the outcome its step's error would have", () => {
    const failed = (cause: unknown) => ({
      ok: false as const,
      error: new ParallelStepError("map", "m", 2, 1, cause),
    });
    expect(decideOutcome(failed(new UnrecoverableError("no such user")), input())).toEqual({
      outcome: "dead",
      error: 'map "m": step 2 failed: no such user',
    });
    expect(decideOutcome(failed(new DurableMisuseError("bad")), input()).outcome).toBe("dead");
    expect(decideOutcome(failed(new RetryAfterError(42)), input())).toMatchObject({
      outcome: "retry",
      delaySeconds: 42,
    });
    expect(decideOutcome(failed(new ThrottledError(5)), input()).outcome).toBe("throttled");
    expect(decideOutcome(failed(new Error("boom")), input())).toMatchObject({ outcome: "retry" });
  });

  test("RetryAfterError → retry after exactly its delay, not the backoff", () => {
    expect(decideOutcome({ ok: false, error: new RetryAfterError(42) }, input())).toEqual({
      outcome: "retry",
      delaySeconds: 42,
      error: "retry after 42s",
    });
    // Fractions round up, and never below one second.
    expect(decideOutcome({ ok: false, error: new RetryAfterError(2.1) }, input())).toMatchObject({
      delaySeconds: 3,
    });
    expect(decideOutcome({ ok: false, error: new RetryAfterError(0) }, input())).toMatchObject({
      delaySeconds: 1,
    });
  });

  test("RetryAfterError spends an attempt: on the last one the job is dead", () => {
    expect(
      decideOutcome({ ok: false, error: new RetryAfterError(5, "later") }, input({ attempt: 3 })),
    ).toEqual({
      outcome: "dead",
      // Its attempts ran out: a kind with onExhausted "pause" pauses instead (settleClaimed).
      exhausted: true,
      error: "later",
    });
  });

  test("ThrottledError → throttled with its delay, even on the last attempt (no attempt spent)", () => {
    expect(decideOutcome({ ok: false, error: new ThrottledError(20) }, input({ attempt: 3 }))).toEqual({
      outcome: "throttled",
      delaySeconds: 20,
      reason: "throttled for 20s",
    });
  });

  test("a back-pressure error naming a flow limit carries the limit, with its message", () => {
    const named = { limit: "llm", message: "429 from the partner" };
    expect(decideOutcome({ ok: false, error: new ThrottledError(20, named) }, input())).toEqual({
      outcome: "throttled",
      delaySeconds: 20,
      reason: "429 from the partner",
      limit: "llm",
    });
    expect(decideOutcome({ ok: false, error: new RetryAfterError(5, named) }, input())).toEqual({
      outcome: "retry",
      delaySeconds: 5,
      error: "429 from the partner",
      limit: "llm",
    });
    expect(
      decideOutcome({ ok: false, error: new RetryAfterError(5, { limit: "llm" }) }, input()),
    ).toMatchObject({
      error: "retry after 5s",
    });
  });

  test("ThrottledError's delay is capped at SQS's native delay and floored at one second", () => {
    expect(decideOutcome({ ok: false, error: new ThrottledError(86_400) }, input())).toMatchObject({
      outcome: "throttled",
      delaySeconds: MAX_DELAY_SECONDS,
    });
    expect(decideOutcome({ ok: false, error: new ThrottledError(0.01) }, input())).toMatchObject({
      outcome: "throttled",
      delaySeconds: 1,
    });
  });

  test("a plain error with attempts left → retry with the queue's backoff (injected random)", () => {
    const random = () => 0.5;
    const d = decideOutcome(
      { ok: false, error: new Error("boom") },
      input({ attempt: 2, maxAttempts: 5, random }),
    );
    expect(d).toEqual({
      outcome: "retry",
      delaySeconds: backoffSeconds(2, backoff, () => 0.5),
      error: "boom",
    });
    expect(d).toMatchObject({ delaySeconds: 3 }); // nominal 4: 2 + 0.5*2
  });

  test("timeout → retry with a timeout message", () => {
    expect(decideOutcome({ ok: false, abort: "timeout" }, input({ timeoutSeconds: 30 }))).toEqual({
      outcome: "retry",
      delaySeconds: 1,
      error: "timed out after 30s",
    });
  });

  test("timeout on the last attempt → dead", () => {
    expect(decideOutcome({ ok: false, abort: "timeout" }, input({ attempt: 3, timeoutSeconds: 7 }))).toEqual({
      outcome: "dead",
      exhausted: true,
      error: "timed out after 7s",
    });
  });

  test("the last attempt failing → dead with the error", () => {
    expect(
      decideOutcome({ ok: false, error: new Error("still broken") }, input({ attempt: 3, maxAttempts: 3 })),
    ).toEqual({
      outcome: "dead",
      exhausted: true,
      error: "still broken",
    });
    // Attempts past the limit (lease takeovers) are dead as well.
    expect(
      decideOutcome({ ok: false, error: new Error("x") }, input({ attempt: 4, maxAttempts: 3 })).outcome,
    ).toBe("dead");
  });

  test("a retry further out than SQS visibility (12 h) → reschedule", () => {
    const beyond = MAX_VISIBILITY_SECONDS + 1;
    expect(decideOutcome({ ok: false, error: new RetryAfterError(beyond, "tomorrow") }, input())).toEqual({
      outcome: "reschedule",
      delaySeconds: beyond,
      error: "tomorrow",
    });
    // Exactly 12 h still fits a message's visibility.
    expect(
      decideOutcome({ ok: false, error: new RetryAfterError(MAX_VISIBILITY_SECONDS) }, input()).outcome,
    ).toBe("retry");
    // A long backoff policy gets there too.
    const long = decideOutcome(
      { ok: false, error: new Error("slow") },
      input({ attempt: 20, maxAttempts: 30, backoff: { baseSeconds: 60, maxSeconds: 7 * 86_400 } }),
    );
    expect(long.outcome).toBe("reschedule");
  });

  test("cancel → cancelled, whatever the handler did", () => {
    expect(decideOutcome({ ok: false, abort: "cancelled" }, input())).toEqual({
      outcome: "cancelled",
      error: "cancelled on request",
    });
    expect(
      decideOutcome({ ok: false, abort: "cancelled", error: new UnrecoverableError("x") }, input()).outcome,
    ).toBe("cancelled");
  });

  test("lost lease → abandon: the new owner decides, even for errors that would end the job", () => {
    expect(decideOutcome({ ok: false, abort: "lease_lost" }, input())).toEqual({ outcome: "abandon" });
    expect(
      decideOutcome(
        { ok: false, abort: "lease_lost", error: new UnrecoverableError("x") },
        input({ attempt: 3 }),
      ),
    ).toEqual({ outcome: "abandon" });
  });

  test("non-Error throwables and long messages are described safely", () => {
    expect(decideOutcome({ ok: false, error: "plain string" }, input())).toMatchObject({
      error: "plain string",
    });
    const d = decideOutcome({ ok: false, error: new Error("e".repeat(2000)) }, input());
    expect(d).toMatchObject({ outcome: "retry" });
    expect((d as { error: string }).error).toHaveLength(500);
  });
});

describe("withoutClaim: a lane without a claim keeps only what it can record (§16)", () => {
  test("a cancel ends it dead, a retry past SQS's reach waits as long as SQS can hide it, a lost lease hands it back", () => {
    expect(withoutClaim({ outcome: "cancelled", error: "cancelled on request" })).toEqual({
      outcome: "dead",
      error: "cancelled on request",
    });
    expect(withoutClaim({ outcome: "cancelled" })).toEqual({ outcome: "dead", error: "cancelled" });
    expect(withoutClaim({ outcome: "reschedule", delaySeconds: 86_400, error: "e" })).toEqual({
      outcome: "retry",
      delaySeconds: MAX_VISIBILITY_SECONDS,
      error: "e",
    });
    expect(withoutClaim({ outcome: "retry", delaySeconds: 5, error: "e" })).toEqual({
      outcome: "retry",
      delaySeconds: 5,
      error: "e",
    });
    expect(withoutClaim({ outcome: "abandon" })).toEqual({ outcome: "released" });
    expect(withoutClaim({ outcome: "done", result: "1" })).toEqual({ outcome: "done", result: "1" });
  });
});
