import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { defineApp } from "../../lib/declarations/define-app.ts";
import { resolvePoolKinds } from "../../lib/declarations/pool-config.ts";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import type { QueueDeclaration } from "../../lib/declarations/queue-declaration.ts";
import {
  assertValidDeclarations,
  DeclarationError,
  type Declarations,
  validateDeclarations,
} from "../../lib/declarations/validate-app.ts";

const real: Declarations = app;
type Kind = Declarations["kinds"][number];

/** The real declarations with one queue's fields changed. */
const withQueue = (name: string, patch: Partial<QueueDeclaration>): Declarations => ({
  ...real,
  queues: real.queues.map((q) => (q.name === name ? { ...q, ...patch } : q)),
});
const withKind = (name: string, patch: Partial<Kind>): Declarations => ({
  ...real,
  kinds: real.kinds.map((k) => (k.name === name ? { ...k, ...patch } : k)),
});
const withPoolKind = (name: string, patch: Partial<PoolKindSpec>): Declarations => ({
  ...real,
  poolKinds: real.poolKinds.map((k) => (k.name === name ? { ...k, ...patch } : k)),
});
const withSchedule = (patch: { kind?: string; queue?: string }): Declarations => ({
  ...real,
  schedules: (real.schedules ?? []).map((s) => ({ ...s, ...patch })),
});
const defaultQueue = real.queues.find((q) => q.name === "default") as QueueDeclaration;

/** The problems found; exactly one each in most cases, so only the rule under test fired. */
const problems = (d: Declarations) => validateDeclarations(d);

describe("the app's declarations", () => {
  test("pass every rule", () => {
    expect(problems(real)).toEqual([]);
    expect(() => assertValidDeclarations(real)).not.toThrow();
  });

  test("with no operator file, resolving the pool kinds changes nothing", () => {
    expect(resolvePoolKinds(app.queues, app.poolKinds)).toEqual(app.poolKinds);
    expect(real.schedules?.length).toBeGreaterThan(0);
  });

  test("defineApp refuses an app the validator refuses, listing every problem", () => {
    const bad = { ...app, queues: app.queues.map((q) => ({ ...q, maxConcurrency: 1 })) };
    expect(() => defineApp(bad)).toThrow(DeclarationError);
    expect(() => defineApp(bad)).toThrow(/"default": maxConcurrency 1 is outside 2\.\.1000/);
  });

  test("a rate-limit scope with a bad name or capacity is refused", () => {
    expect(
      problems({ ...real, rateLimits: [{ scope: "Partner API", capacity: 5, refillPerSecond: 1 }] }),
    ).toEqual([expect.stringMatching(/rate-limit scope "Partner API": name must match/)]);
    expect(problems({ ...real, rateLimits: [{ scope: "p", capacity: 0, refillPerSecond: 1 }] })).toEqual([
      expect.stringMatching(/capacity must be a positive integer/),
    ]);
  });
});

describe("rule 1: visibility covers the worker timeout, the batching window and an init", () => {
  test("a 12 h pool timeout leaves no room under SQS's 12 h cap for the window and the init", () => {
    expect(problems(withQueue("heavy", { workerTimeoutSeconds: 12 * 3600 }))).toEqual([
      'queue "heavy": visibility timeout 43200s is under workerTimeoutSeconds 43200 + batchWindowSeconds 20 + 10s of init = 43230s (SQS caps visibility at 43200s, so workerTimeoutSeconds can be at most 43170)',
    ]);
  });

  test("43170 s is exactly the most that fits", () => {
    expect(problems(withQueue("heavy", { workerTimeoutSeconds: 43_170 }))).toEqual([]);
  });
});

describe("rule 2: Lambda's 15-minute limit and the queue's worker timeout", () => {
  test("a Lambda kind over 900 s is refused (and outlives its 900 s worker)", () => {
    expect(problems(withKind("sleep", { timeoutSeconds: 901 }))).toEqual([
      `kind "sleep": timeoutSeconds 901 is over queue "default"'s workerTimeoutSeconds 900; the worker would be killed first`,
      `kind "sleep": timeoutSeconds 901 is over Lambda's 900s limit`,
    ]);
  });

  test("a Lambda-tier queue with a worker timeout over 900 s is refused", () => {
    expect(problems(withQueue("default", { workerTimeoutSeconds: 1000 }))).toEqual([
      `queue "default": workerTimeoutSeconds 1000 is over Lambda's 900s limit`,
    ]);
  });

  test("a kind longer than its queue's worker timeout is refused", () => {
    expect(problems(withQueue("default", { workerTimeoutSeconds: 600 }))).toEqual([
      `kind "sleep": timeoutSeconds 900 is over queue "default"'s workerTimeoutSeconds 600; the worker would be killed first`,
    ]);
  });

  test("so is a pool kind longer than its pool queue's worker timeout", () => {
    expect(problems(withPoolKind("py-digest", { timeoutSeconds: 1200 }))).toEqual([
      `pool kind "py-digest": timeoutSeconds 1200 is over queue "heavy"'s workerTimeoutSeconds 900; the worker would be killed first`,
    ]);
  });
});

describe("a kind's start deadline is a whole number of seconds from 1 to SQS's retention", () => {
  test("0, a fraction or more than 14 days is refused, naming the kind; 14 days is taken", () => {
    for (const startWithinSeconds of [0, 2.5, 14 * 86_400 + 1])
      expect(problems(withKind("sleep", { startWithinSeconds }))).toEqual([
        `kind "sleep": startWithinSeconds must be a whole number from 1 to 1209600 (SQS's retention), got ${startWithinSeconds}`,
      ]);
    expect(problems(withKind("sleep", { startWithinSeconds: 14 * 86_400 }))).toEqual([]);
  });
});

describe('onExhausted: "pause" needs a claimed lane (a paused job waits in its item)', () => {
  test("taken on the fenced and lean lanes and on a pool kind; refused without a claim, naming the kind and lane", () => {
    expect(problems(withKind("sleep", { onExhausted: "pause" }))).toEqual([]);
    expect(problems(withKind("sleep", { onExhausted: "pause", lane: "lean" }))).toEqual([]);
    const pool = real.poolKinds[0]?.name as string;
    expect(problems(withPoolKind(pool, { onExhausted: "pause" }))).toEqual([]);
    for (const lane of ["at-least-once", "fire-and-forget"] as const)
      expect(problems(withKind("sleep", { onExhausted: "pause", lane }))).toEqual([
        `kind "sleep": onExhausted "pause" needs a lane that claims its runs (fenced or lean); lane "${lane}" keeps no job item to pause in when the attempts run out`,
      ]);
    expect(problems(withKind("sleep", { onExhausted: "dead", lane: "fire-and-forget" }))).toEqual([]);
  });

  test("anything but dead or pause is refused", () => {
    expect(problems(withKind("sleep", { onExhausted: "park" as never }))).toEqual([
      'kind "sleep": onExhausted "park" is not one of dead, pause',
    ]);
  });
});

describe("rule 3: Lambda event source maximum concurrency is 2..1000", () => {
  test.each([1, 1001, 2.5])("maxConcurrency %s on a Lambda-tier queue is refused", (maxConcurrency) => {
    expect(problems(withQueue("default", { maxConcurrency }))).toEqual([
      `queue "default": maxConcurrency ${maxConcurrency} is outside 2..1000 (Lambda event source maximum concurrency)`,
    ]);
  });

  test("a pool-tier queue is not bound by it", () => {
    expect(problems(withQueue("heavy", { maxConcurrency: 1 }))).toEqual([]);
  });
});

describe("rule 4: every queue has a DLQ with redrive headroom", () => {
  test("a queue without maxReceiveCount is refused", () => {
    // A plain JS declaration (or a cast) can leave it out; the type alone doesn't stop that.
    const { maxReceiveCount: _, ...noRedrive } = defaultQueue;
    const d = { ...real, queues: real.queues.map((q) => (q === defaultQueue ? noRedrive : q)) };
    expect(problems(d as unknown as Declarations)).toEqual([
      'queue "default" has no dead-letter queue: maxReceiveCount is missing (SQS redrive limits)',
    ]);
  });

  test.each([0, 1001, 12.5])("maxReceiveCount %s is refused", (maxReceiveCount) => {
    expect(problems(withQueue("default", { maxReceiveCount }))).toEqual([
      `queue "default" has no dead-letter queue: maxReceiveCount ${maxReceiveCount} is not an integer in 1..1000 (SQS redrive limits)`,
    ]);
  });

  test("maxReceiveCount under 2 × the largest maxAttempts on the queue is refused", () => {
    const bursts = (kind: string) =>
      `kind "${kind}": a burst's message may come back 5 times (maxDelay / period) before it runs, over half of queue "default"'s maxReceiveCount 9; shorten debounce.maxDelaySeconds or raise maxReceiveCount`;
    // The debounced demo kinds' bursts need room on the queue too (docs/guide/flow-control.md).
    expect(problems(withQueue("default", { maxReceiveCount: 9 }))).toEqual([
      bursts("doc-index"),
      bursts("doc-digest"),
      'queue "default": maxReceiveCount 9 is under 2 × the largest maxAttempts on it (kind "flaky": 5) = 10',
    ]);
    expect(problems(withQueue("default", { maxReceiveCount: 10 }))).toEqual([]);
  });

  test("pool kinds count towards their queue's headroom", () => {
    expect(problems(withPoolKind("node-digest", { maxAttempts: 61 }))).toEqual([
      'queue "heavy": maxReceiveCount 120 is under 2 × the largest maxAttempts on it (kind "node-digest": 61) = 122',
    ]);
  });
});

describe("rule 5: pool capacities in order", () => {
  test("soft under 1 is refused", () => {
    expect(problems(withPoolKind("py-digest", { soft: 0 }))).toEqual([
      'pool kind "py-digest": soft 0 is under 1',
    ]);
  });

  test("soft above hard is refused", () => {
    expect(problems(withPoolKind("py-digest", { soft: 5, hard: 4 }))).toEqual([
      'pool kind "py-digest": soft 5 is above hard 4',
    ]);
  });

  test("hard above MAX_CHILDREN_PER_KIND is refused", () => {
    expect(problems(withPoolKind("py-digest", { hard: 65 }))).toEqual([
      'pool kind "py-digest": hard 65 is over MAX_CHILDREN_PER_KIND 64',
    ]);
  });
});

describe("rule 6: the declarations agree with each other", () => {
  test("a queue declared twice is refused", () => {
    expect(problems({ ...real, queues: [...real.queues, defaultQueue] })).toEqual([
      'queue "default" is declared twice',
    ]);
  });

  test("a kind name used by a Lambda kind and a pool kind is refused", () => {
    const [pool] = real.poolKinds as [PoolKindSpec];
    expect(problems({ ...real, poolKinds: [...real.poolKinds, { ...pool, name: "echo" }] })).toEqual([
      'kind "echo" is declared twice',
    ]);
  });

  test("a kind or pool kind on an undeclared queue is refused", () => {
    expect(problems(withKind("echo", { queue: "nope" }))).toEqual([
      'kind "echo": queue "nope" is not declared',
    ]);
    expect(problems(withPoolKind("py-digest", { queue: "nope" }))).toEqual([
      'pool kind "py-digest": queue "nope" is not declared',
    ]);
  });

  test("a Lambda kind on a pool-tier queue is refused", () => {
    expect(problems(withKind("echo", { queue: "heavy" }))).toEqual([
      'kind "echo" runs on the lambda tier, but queue "heavy" is pool-tier',
    ]);
  });

  test("a pool kind on a Lambda-tier queue is refused", () => {
    expect(problems(withPoolKind("py-digest", { queue: "default" }))).toEqual([
      'pool kind "py-digest" runs on the pool tier, but queue "default" is lambda-tier',
    ]);
  });

  test.each([
    [0, 0],
    [11, 0],
    [0, 1],
    [10_001, 1],
  ])("batchSize %s with a batching window of %s s is refused", (batchSize, batchWindowSeconds) => {
    const max = batchWindowSeconds >= 1 ? 10_000 : 10;
    const why = "over 10 needs batchWindowSeconds ≥ 1; one SQS receive returns at most 10";
    expect(problems(withQueue("default", { batchSize, batchWindowSeconds }))).toEqual([
      `queue "default": batchSize ${batchSize} is outside 1..${max} (${why})`,
    ]);
  });

  test("a Lambda queue with a batching window takes batches over 10; a pool queue never does", () => {
    expect(problems(withQueue("default", { batchSize: 100, batchWindowSeconds: 2 }))).toEqual([]);
    expect(problems(withQueue("heavy", { batchSize: 11 }))).toEqual([
      'queue "heavy": batchSize 11 is outside 1..10 (one SQS receive returns at most 10)',
    ]);
  });

  test.each([-1, 301])("batchWindowSeconds %s is refused", (batchWindowSeconds) => {
    expect(problems(withQueue("default", { batchWindowSeconds }))).toEqual([
      `queue "default": batchWindowSeconds ${batchWindowSeconds} is outside 0..300`,
    ]);
  });

  test.each(["Default", "1st", "under_score", `q${"x".repeat(40)}`])("queue name %s is refused", (name) => {
    expect(problems({ ...real, queues: [...real.queues, { ...defaultQueue, name }] })).toEqual([
      `queue "${name}": name must match /^[a-z][a-z0-9-]{0,39}$/ (it becomes part of AWS resource names)`,
    ]);
  });

  test("a 40-character queue name is the longest allowed", () => {
    const name = `q${"x".repeat(39)}`;
    expect(problems({ ...real, queues: [...real.queues, { ...defaultQueue, name }] })).toEqual([]);
  });

  test("a schedule naming an unknown kind is refused", () => {
    expect(problems(withSchedule({ kind: "nope" }))).toEqual([
      'schedule "heartbeat-echo": kind "nope" is not declared',
    ]);
  });

  test("a schedule naming an unknown queue is refused", () => {
    expect(problems(withSchedule({ queue: "nope" }))).toEqual([
      'schedule "heartbeat-echo": queue "nope" is not declared',
    ]);
  });

  test("a schedule sending a kind to a queue of the other tier is refused", () => {
    expect(problems(withSchedule({ queue: "heavy" }))).toEqual([
      'schedule "heartbeat-echo": kind "echo" runs on the lambda tier, but queue "heavy" is pool-tier',
    ]);
    expect(problems(withSchedule({ kind: "py-digest", queue: "heavy" }))).toEqual([]);
  });
});

describe("problems accumulate", () => {
  const twoBroken: Declarations = {
    ...withQueue("default", { batchSize: 11, batchWindowSeconds: 0 }),
    poolKinds: withPoolKind("py-digest", { soft: 0 }).poolKinds,
  };

  test("two broken rules give two messages", () => {
    expect(problems(twoBroken)).toEqual([
      'pool kind "py-digest": soft 0 is under 1',
      'queue "default": batchSize 11 is outside 1..10 (over 10 needs batchWindowSeconds ≥ 1; one SQS receive returns at most 10)',
    ]);
  });

  test("assertValidDeclarations throws a DeclarationError listing both", () => {
    let caught: unknown;
    try {
      assertValidDeclarations(twoBroken);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DeclarationError);
    const err = caught as DeclarationError;
    expect(err.name).toBe("DeclarationError");
    expect(err.problems).toHaveLength(2);
    expect(err.message).toContain("invalid declarations (2)");
    expect(err.message).toContain('pool kind "py-digest": soft 0 is under 1');
    expect(err.message).toContain('queue "default": batchSize 11');
  });
});

describe("batch kinds (batch-echo: maxSize 50, maxWaitSeconds 2 on queue batch: batchSize 50, window 2)", () => {
  const withBatch = (patch: Record<string, unknown>, lane?: string): Declarations =>
    withKind("batch-echo", {
      ...(lane ? { lane: lane as Kind["lane"] } : {}),
      batch: { settings: { maxSize: 50, maxWaitSeconds: 2, policy: "duration", ...patch } },
    } as Partial<Kind>);

  test("the app's own batch kind is sound", () => {
    expect(problems(withBatch({}))).toEqual([]);
  });

  test.each([
    [{ maxSize: 0 }, 'kind "batch-echo": batch maxSize 0 is outside 1..100 (the Lambda tier)'],
    [{ maxSize: 101 }, 'kind "batch-echo": batch maxSize 101 is outside 1..100 (the Lambda tier)'],
    [
      { maxSize: 60 },
      `kind "batch-echo": batch maxSize 60 is over queue "batch"'s batchSize 50: one invocation never carries more`,
    ],
    [
      { maxWaitSeconds: 301 },
      `kind "batch-echo": batch maxWaitSeconds 301 is outside 0..300 (the event source's batching window)`,
    ],
    [
      { maxWaitSeconds: 3 },
      `kind "batch-echo": batch maxWaitSeconds 3 is over queue "batch"'s batchWindowSeconds 2, the longest the event source gathers`,
    ],
    [{ maxKeyConcurrency: 0 }, 'kind "batch-echo": batch maxKeyConcurrency 0 is under 1'],
    [{ maxPendingPerKey: 0 }, 'kind "batch-echo": batch maxPendingPerKey 0 is under 1'],
    [
      { policy: "eager" },
      'kind "batch-echo": batch policy "eager" is not one of immediate, size, duration, balanced',
    ],
  ])("%o is refused, naming the kind", (patch, problem) => {
    expect(problems(withBatch(patch))).toEqual([problem]);
  });

  test("a batch kind runs fenced", () => {
    expect(problems(withBatch({}, "lean"))).toEqual([
      'kind "batch-echo": a batch kind runs fenced; lane "lean" is not allowed',
    ]);
  });
});

describe("pool batch kinds (py-digest-batch on queue heavy: maxSize 20, maxWaitSeconds 2)", () => {
  const spec = real.poolKinds.find((k) => k.name === "py-digest-batch") as PoolKindSpec;
  const withBatch = (patch: Record<string, unknown>): Declarations =>
    withPoolKind("py-digest-batch", { batch: { ...spec.batch, ...patch } as PoolKindSpec["batch"] });

  test("the app's own pool batch kind is sound, and the pool's bounds are wider than Lambda's", () => {
    expect(problems(withBatch({}))).toEqual([]);
    // Neither the queue's batchSize (10) nor its window binds the pool, which gathers across receives.
    expect(problems(withBatch({ maxSize: 1000, maxWaitSeconds: 900 }))).toEqual([]);
  });

  test.each([
    [{ maxSize: 0 }, 'pool kind "py-digest-batch": batch maxSize 0 is outside 1..1000 (the pool tier)'],
    [{ maxSize: 1001 }, 'pool kind "py-digest-batch": batch maxSize 1001 is outside 1..1000 (the pool tier)'],
    [
      { maxWaitSeconds: 901 },
      'pool kind "py-digest-batch": batch maxWaitSeconds 901 is outside 0..900 (the pool tier: a waiting item stays received)',
    ],
    [{ maxKeyConcurrency: 0 }, 'pool kind "py-digest-batch": batch maxKeyConcurrency 0 is under 1'],
    [
      { policy: "lazy" },
      'pool kind "py-digest-batch": batch policy "lazy" is not one of immediate, size, duration, balanced',
    ],
  ])("%o is refused, naming the kind", (patch, problem) => {
    expect(problems(withBatch(patch))).toEqual([problem]);
  });
});
