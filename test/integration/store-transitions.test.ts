import { PutCommand } from "@aws-sdk/lib-dynamodb";
import { beforeAll, describe, expect, it } from "vitest";
import {
  isLegal,
  type JobStatus,
  jobStatuses,
  type StoreTransitions,
  type Transition,
  type TransitionStart,
} from "../../lib/job/status.ts";
import { recordChildOutcome, recordChildOutcomeTransitions } from "../../lib/store/child-step-ops.ts";
import { appendToBurst, coalesceTransitions, reviseWaitingJob } from "../../lib/store/coalesce-ops.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import { markQueued, markQueuedTransitions, putJob, putJobTransitions } from "../../lib/store/enqueue-ops.ts";
import {
  cancel,
  cancelTransitions,
  type Finalization,
  finalize,
  finalizeTransitions,
  tombstone,
  tombstoneTransitions,
} from "../../lib/store/finalize-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { claim, claimTransitions, heartbeat, heartbeatTransitions } from "../../lib/store/lease-ops.ts";
import { recordOutcome, recordOutcomeTransitions } from "../../lib/store/outcome-ops.ts";
import { endOversized, endOversizedTransitions } from "../../lib/store/oversized-ops.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import {
  beginPromotion,
  beginPromotionTransitions,
  deadLetter,
  deadLetterTransitions,
} from "../../lib/store/reaper-ops.ts";
import { redrive, redriveTransitions } from "../../lib/store/redrive-ops.ts";
import { markResent, markResentTransitions } from "../../lib/store/stale-message-ops.ts";
import {
  recordStep,
  recordStepTransitions,
  restartJournal,
  restartJournalTransitions,
  resumeWaiting,
  resumeWaitingTransitions,
} from "../../lib/store/step-ops.ts";
import { ManualClock } from "../support/clock.ts";
import { clientOn, dynamoBackends, freshTable } from "../support/dynamo-backends.ts";
import { queuedItem, seedOf } from "../support/jobs.ts";

/**
 * Every store operation that writes a job item declares the status edges it may take. This suite
 * holds each declaration against the state map (lib/job/status.ts) and then against the operation
 * itself: from every start (no item, and each status), it runs the operation as a caller entitled
 * to it would, and checks that whatever edge it took is declared, and that every declared edge is
 * taken from some start.
 */
const TOKEN = "owner-token";
const TTL = Date.parse("2027-01-01T00:00:00Z") / 1000;
const starts: readonly TransitionStart[] = ["missing", ...jobStatuses];

type Operation = (store: StoreContext, item: JobItem) => Promise<unknown>;
const finalizeAs =
  (f: (now: number) => Finalization): Operation =>
  (store, item) =>
    finalize(store, item, TOKEN, f(store.clock.now()));

const operations: Record<string, { declared: StoreTransitions; run: Operation[] }> = {
  putJob: {
    declared: putJobTransitions,
    run: [(s, i) => putJob(s, i), (s, i) => putJob(s, { ...i, status: "scheduled" })],
  },
  claim: { declared: claimTransitions, run: [(s, i) => claim(s, seedOf(i), "new-token", 30_000)] },
  // An item at DynamoDB's size limit ends, dead (a run's or a claim's write refused) or cancelled.
  endOversized: {
    declared: endOversizedTransitions,
    run: [
      (s, i) => endOversized(s, i, { as: "dead", error: "refused", expiresAt: TTL }),
      (s, i) => endOversized(s, i, { as: "cancelled", error: "refused", expiresAt: TTL }),
    ],
  },
  heartbeat: { declared: heartbeatTransitions, run: [(s, i) => heartbeat(s, i.id, TOKEN, 30_000)] },
  finalize: {
    declared: finalizeTransitions,
    run: [
      finalizeAs(() => ({ outcome: "done", result: { json: "1" }, expiresAt: TTL })),
      finalizeAs((now) => ({ outcome: "retry", runAt: now + 1000, error: "x" })),
      finalizeAs((now) => ({ outcome: "reschedule", runAt: now + 86_400_000, error: "x" })),
      finalizeAs((now) => ({ outcome: "throttled", runAt: now + 1000, reason: "x" })),
      finalizeAs((now) => ({ outcome: "released", runAt: now })),
      finalizeAs(() => ({ outcome: "dead", error: "x", expiresAt: TTL })),
      finalizeAs(() => ({ outcome: "cancelled", expiresAt: TTL })),
      // A kind with onExhausted "pause" that used its last attempt.
      finalizeAs(() => ({ outcome: "paused", error: "x" })),
      finalizeAs((now) => ({
        outcome: "suspend",
        runAt: now + 2000,
        waiting: { for: "sleep", until: now + 2000 },
        step: { name: "nap", record: { n: 1, a: 1, t: now, until: now + 2000 }, mapExists: false },
        holdUntil: now + 122_000,
      })),
    ],
  },
  // A durable step's record changes no status; a resume takes a waiting job back to queued.
  recordStep: {
    declared: recordStepTransitions,
    run: [(s, i) => recordStep(s, i.id, TOKEN, "a", { n: 1, a: 1, t: s.clock.now(), v: "1" }, false)],
  },
  // An onVersionChange "restart" drops a running job's journal under its fence: no status changes.
  restartJournal: {
    declared: restartJournalTransitions,
    run: [(s, i) => restartJournal(s, i.id, TOKEN, "v2")],
  },
  resumeWaiting: {
    declared: resumeWaitingTransitions,
    run: [
      async (s, i) => {
        // Whatever its status, the job waits for a token (a missing job stays missing).
        const waiting = { for: "token", token: "tok_1", until: s.clock.now() + 60_000 };
        const stored = await getJob(s, i.id);
        if (stored) await s.doc.send(new PutCommand({ TableName: s.table, Item: { ...stored, waiting } }));
        return resumeWaiting(s, i, { token: "tok_1" }, s.clock.now() + 120_000);
      },
    ],
  },
  // A child's end into its parent's step (ctx.invokeMany): the parent's status never changes.
  recordChildOutcome: {
    declared: recordChildOutcomeTransitions,
    run: [
      async (s, i) => {
        const steps = { kids: { n: 1, a: 1, t: s.clock.now(), child: "01CHILD" } };
        const stored = await getJob(s, i.id);
        if (stored) await s.doc.send(new PutCommand({ TableName: s.table, Item: { ...stored, steps } }));
        return recordChildOutcome(s, i.id, "kids", "01CHILD", { v: '{"status":"done"}' });
      },
    ],
  },
  cancel: { declared: cancelTransitions, run: [(s, i) => cancel(s, i.id, TTL)] },
  redrive: {
    declared: redriveTransitions,
    run: [
      (s, i) => redrive(s, i, s.clock.now() + 60_000),
      // A resume of a paused job, with a new payload.
      (s, i) => redrive(s, i, s.clock.now() + 60_000, { payload: { payload: '{"n":2}' } }),
    ],
  },
  markQueued: { declared: markQueuedTransitions, run: [(s, i) => markQueued(s, i.id, i.runAt)] },
  beginPromotion: {
    declared: beginPromotionTransitions,
    run: [(s, i) => beginPromotion(s, i.id, i.runAt, s.clock.now() + 60_000)],
  },
  deadLetter: {
    declared: deadLetterTransitions,
    run: [(s, i) => deadLetter(s, seedOf(i), "exceeded receive count", TTL)],
  },
  // A debounced or singleton job's burst: its payload and runAt change, its status never.
  reviseWaitingJob: {
    declared: coalesceTransitions,
    run: [
      (s, i) => reviseWaitingJob(s, i.id, '{"rev":2}', s.clock.now()),
      (s, i) => reviseWaitingJob(s, i.id, '{"rev":2}', s.clock.now(), { runAt: s.clock.now() + 2000 }),
    ],
  },
  appendToBurst: {
    declared: coalesceTransitions,
    run: [
      (s, i) =>
        appendToBurst(
          s,
          i.id,
          '{"rev":2}',
          s.clock.now() - 10_000,
          { runAt: s.clock.now() + 2000 },
          {
            maxItems: 100,
            maxBytes: 262_144,
          },
        ),
    ],
  },
  markResent: { declared: markResentTransitions, run: [(s, i) => markResent(s, i, s.clock.now())] },
  tombstone: { declared: tombstoneTransitions, run: [(s, i) => tombstone(s, i.id, TTL)] },
  recordOutcome: {
    declared: recordOutcomeTransitions,
    run: [
      (s, i) => recordOutcome(s, seedOf(i), 1, { status: "done", result: { json: "1" }, expiresAt: TTL }),
      (s, i) => recordOutcome(s, seedOf(i), 1, { status: "dead", error: "x", expiresAt: TTL }),
      (s, i) => recordOutcome(s, seedOf(i), 1, { status: "queued", error: "x", runAt: s.clock.now() + 1000 }),
    ],
  },
};

const key = ([from, to]: Transition) => `${from}→${to}`;

describe("store transitions: declarations", () => {
  it.each(Object.entries(operations))("%s declares only edges of the state map", (_name, { declared }) => {
    for (const edge of declared) expect(isLegal(edge), key(edge)).toBe(true);
  });

  it("the state map lets the DLQ drain take queued and scheduled jobs to dead", () => {
    expect(isLegal(["queued", "dead"])).toBe(true);
    expect(isLegal(["scheduled", "dead"])).toBe(true);
    expect(isLegal(["done", "dead"])).toBe(false);
    // The one write of an unclaimed lane creates a finished job (docs/architecture.md §16).
    expect(isLegal(["missing", "done"])).toBe(true);
    expect(isLegal(["done", "queued"])).toBe(false);
  });
});

describe.each(dynamoBackends.slice(0, 1))("store transitions: operations on $name", (factory) => {
  const client = clientOn(factory);
  let store: StoreContext;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock();
    store = createStoreContext(client(), await freshTable(client(), "transitions"), clock);
  });

  /** A job in `status` that every operation's caller would be entitled to act on: due, under an expired lease held by TOKEN. */
  async function jobIn(status: TransitionStart): Promise<JobItem> {
    const item = queuedItem(clock);
    if (status === "missing") return item;
    const stored: JobItem = {
      ...item,
      status,
      ...(status === "running" ? { leaseToken: TOKEN, leaseUntil: clock.now() - 1, attempts: 1 } : {}),
    };
    await store.doc.send(new PutCommand({ TableName: store.table, Item: stored }));
    return stored;
  }

  it.each(Object.entries(operations))(
    "%s takes only the edges it declares, and each of them",
    async (_name, op) => {
      const taken = new Set<string>();
      for (const from of starts) {
        for (const run of op.run) {
          const item = await jobIn(from);
          await run(store, item).catch(() => undefined);
          const after = (await getJob(store, item.id))?.status as JobStatus | undefined;
          if (after === undefined || (from !== "missing" && after === from && from !== "running")) continue;
          if (from === "running" && after === "running") {
            // A claim's takeover keeps the status but changes the owner; anything else left it alone.
            const now = await getJob(store, item.id);
            if (now?.leaseToken === TOKEN) continue;
          }
          const edge: Transition = [from, after];
          expect(op.declared.map(key), `${_name} took ${key(edge)}`).toContain(key(edge));
          taken.add(key(edge));
        }
      }
      expect([...taken].sort()).toEqual(op.declared.map(key).sort());
    },
  );
});
