import pLimit from "p-limit";
import * as z from "zod";
import { needsClaimCheck } from "../claims/claim-keys.ts";
import { type DurableBody, durableKeepUntil, stowEventData } from "../claims/durable-bodies.ts";
import { ClientError, issuesOf } from "../errors.ts";
import { type EventDelivery, MAX_STEP_NAME_CHARS } from "../job/durable.ts";
import { BoundedJson } from "../job/json-depth.ts";
import { eventWaitersPartition } from "../job/key-layout.ts";
import { MAX_CURSOR_CHARS, MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import { effectiveSettings } from "../queue-control/settings.ts";
import type { Engine } from "../services/engine-services.ts";
import { decodeWaiterCursor, encodeWaiterCursor } from "../store/cursor.ts";
import { deleteEventWaiter, type EventWaiter, listEventWaiters } from "../store/event-waiter-ops.ts";
import { getJobs } from "../store/group-read-ops.ts";
import { getQueueState } from "../store/queue-state.ts";
import { bufferEvent } from "./event-lookback.ts";
import { waiterIsStale, waitsForEvent } from "./event-waiter-state.ts";
import { loseRace } from "./race-losers.ts";
import { resumeWaitingJob } from "./resume-waiting.ts";

/**
 * POST /events's body: an event's name, the value waits match on, its data (nested at most
 * MAX_JSON_DEPTH deep), and the continuation an earlier answer for the same event gave, if any.
 */
export const EventRequest = z
  .object({
    name: z.string().min(1).max(MAX_STEP_NAME_CHARS),
    match: z.string().min(1).max(MAX_STEP_NAME_CHARS),
    data: BoundedJson.optional(),
    continuation: z.string().min(1).max(MAX_CURSOR_CHARS).optional(),
  })
  .strict();

/**
 * A queue's retention in force (its declaration, an operator's override over it); for a queue no
 * longer declared, as long as any queue keeps a job.
 */
async function retentionInForce(
  engine: Pick<Engine, "store" | "queues">,
  queue: string,
): Promise<{ done: number; dead: number }> {
  const declared = engine.queues.find((q) => q.name === queue);
  if (!declared)
    return {
      done: Math.max(...engine.queues.map((q) => q.retentionDays.done)),
      dead: Math.max(...engine.queues.map((q) => q.retentionDays.dead)),
    };
  return effectiveSettings(declared, await getQueueState(engine.store, queue)).retentionDays;
}

/** Waiters a page: the most keys one BatchGetItem reads, so a page's jobs are one read. */
const WAITERS_A_PAGE = 100;

/** A page's resumes (and stale pointers' deletes) in flight at once. */
const RESUMES_AT_ONCE = 16;

/**
 * How long one call starts new pages for: the API's 29 s, less a page's work (at most 100 resumes,
 * 16 at a time) and the function's start.
 */
export const EVENT_BUDGET_MS = 20_000;

/**
 * An event (docs/architecture.md §22): every job waiting for its name and match value resumes with
 * its data. The pair's waiters are read a page at a time, each page's jobs in one read: a job that
 * waits for it is resumed (its pointer then deleted); a pointer that can no longer resume its job is
 * deleted; the data is stored once, when the first job that waits is met. Pages are started while
 * `budgetMs` (by the engine's clock) lasts, at least one; waiters left over are the answer's
 * `continuation`. First (not on a continuation: that is the same event) the event is kept for its
 * name's lookback, so a wait that begins after it, or whose pointer this call missed, takes it
 * (the ordering: lib/durable/event-lookback.ts).
 */
export async function deliverEvent(
  engine: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics" | "queues" | "app">,
  raw: unknown,
  { budgetMs = EVENT_BUDGET_MS }: { budgetMs?: number } = {},
): Promise<EventDelivery> {
  const parsed = EventRequest.safeParse(raw);
  if (!parsed.success)
    throw new ClientError(
      "validation_error",
      "expected { name, match, data, continuation? }",
      issuesOf(parsed.error),
    );
  const { name, match, data, continuation } = parsed.data;
  const json = JSON.stringify(data ?? null);
  if (Buffer.byteLength(json) > MAX_PAYLOAD_BYTES)
    throw new ClientError(
      "payload_too_large",
      `an event's data is at most ${MAX_PAYLOAD_BYTES} bytes of JSON`,
    );
  const partition = eventWaitersPartition(name, match);
  let after: Record<string, unknown> | undefined =
    continuation === undefined ? undefined : decodeWaiterCursor(continuation, partition);
  const started = engine.clock.now();
  // A continuation's event was kept by its first call; its pages' resumes record no event id.
  const id =
    continuation === undefined ? (await bufferEvent(engine, { name, match, json }, started)).id : undefined;
  let stowed: Promise<DurableBody> | undefined;
  // The event ends the first job's wait: it runs from now, then its queue keeps it (a later wait
  // moves the object: durable-suspend.ts). Data kept inline needs no retention, nor its read.
  const stow = async (queue: string) => {
    if (!needsClaimCheck(json)) return stowEventData(engine.claims, json, started, started);
    const keepUntil = durableKeepUntil(started, started, await retentionInForce(engine, queue));
    return stowEventData(engine.claims, json, started, keepUntil);
  };
  const event: PairEvent = {
    name,
    match,
    id,
    body: (queue) => {
      stowed ??= stow(queue);
      return stowed;
    },
  };
  let resumed = 0;
  do {
    const page = await listEventWaiters(engine.store, name, match, { after, limit: WAITERS_A_PAGE });
    resumed += await deliverToPage(engine, event, page.waiters);
    after = page.next;
  } while (after && engine.clock.now() - started < budgetMs);
  if (!after) return { resumed };
  return { resumed, continuation: encodeWaiterCursor(partition, String(after.sk)) };
}

/** An event on its way: its pair, and its data's body, stored on the first call. */
interface PairEvent {
  name: string;
  match: string;
  /** The buffered event's id, recorded with the data it resumes a job with. */
  id: string | undefined;
  /** Its data's body, stored once, when the first waiting job (of `queue`) is met. */
  body: (queue: string) => Promise<DurableBody>;
}

/** One page of waiters: their jobs in one read, then each one's resume or its stale pointer's delete. */
async function deliverToPage(
  engine: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics">,
  event: PairEvent,
  waiters: readonly EventWaiter[],
): Promise<number> {
  if (waiters.length === 0) return 0;
  const jobs = await getJobs(engine.store, [...new Set(waiters.map((w) => w.jobId))]);
  const now = engine.clock.now();
  const { name, match } = event;
  const inFlight = pLimit(RESUMES_AT_ONCE);
  const resumes = await Promise.all(
    waiters.map((waiter) =>
      inFlight(async () => {
        const job = jobs.get(waiter.jobId);
        // The version read: a later run's pointer for the same wait is never the one deleted.
        const version = { step: waiter.step, putBy: { lease: waiter.lease } };
        if (waitsForEvent(job, name, match, waiter.step)) {
          const wait = { event: name, match, step: waiter.step };
          const won = waiter.branch !== undefined ? { w: waiter.branch } : {};
          const data = { ...(await event.body(waiter.queue)), ...(event.id ? { e: event.id } : {}), ...won };
          if (!(await resumeWaitingJob(engine, job, wait, data))) return false;
          await deleteEventWaiter(engine.store, name, match, waiter.jobId, version);
          // A race this event won: its other branches are cancelled now, not at the job's next run.
          if (waiter.branch !== undefined) await loseRace(engine, job, waiter.step, waiter.branch);
          return true;
        }
        if (waiterIsStale(job, waiter.step, now))
          await deleteEventWaiter(engine.store, name, match, waiter.jobId, version);
        return false;
      }),
    ),
  );
  return resumes.filter(Boolean).length;
}
