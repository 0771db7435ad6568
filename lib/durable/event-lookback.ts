import { ulid } from "ulid";
import { durableKeepUntil, stowEventData } from "../claims/durable-bodies.ts";
import { lookbackOf } from "../declarations/event-declaration.ts";
import type { Engine } from "../services/engine-services.ts";
import { type BufferedEvent, listBufferedEvents, putBufferedEvent } from "../store/event-buffer-ops.ts";
import { deleteEventWaiter } from "../store/event-waiter-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { loseRace } from "./race-losers.ts";
import { resumeWaitingJob } from "./resume-waiting.ts";

/**
 * Events kept for a lookback (docs/architecture.md §22, docs/guide/durable-jobs.md): POST /events
 * keeps each event for its name's lookback, and a wait that begins within it takes it.
 *
 * The ordering that loses no event and resumes a wait once, whichever of the two comes first:
 * - POST /events: (E1) puts the buffered event, then (E2) lists the pair's waiters and reads their
 *   jobs, and resumes each that waits.
 * - A wait: (W1) puts its pointer, (W2) writes its suspend, then (W3) reads the pair's buffered events
 *   since its start (less its lookback) and resumes its job itself with the oldest its job has not
 *   taken (afterSuspend).
 * Reads are strongly consistent. If E2 resumed nothing for this wait, either its list missed the
 * pointer (E1 < E2 < W1 < W3) or its read of the job found it not yet waiting (E1 < E2 < W2 < W3):
 * either way W3 finds the event. Both may find each other; the resume's one conditional write (the
 * job still waits for this pair: lib/store/step-ops.ts resumeWaiting) lets one land, the other
 * writes nothing. The job records the event's id beside its data (`e`), so a later wait of the same
 * job on the same pair does not take it again.
 */

/**
 * A buffered event outlives its lookback by one run's length (Lambda's 15 minutes): a wait's W3 comes
 * within its run of any event its E2 missed, so a `since: "wait"` wait (no lookback) is covered too.
 */
export const RUN_ALLOWANCE_MS = 15 * 60 * 1000;

/** The lookback in force for an event name (the app's `events`, else 5 minutes), in ms. */
export function lookbackMs(app: Engine["app"], event: string): number {
  return lookbackOf(app.events)(event) * 1000;
}

/**
 * The time from which a wait takes buffered events: its start, less its name's lookback unless it
 * asked `since: "wait"` (today's behaviour: only what comes after the wait began).
 */
export function waitSince(app: Engine["app"], event: string, startedAt: number, since?: "lookback" | "wait") {
  return since === "wait" ? startedAt : startedAt - lookbackMs(app, event);
}

/**
 * E1: an event kept for its lookback. Data over 8 KiB goes to the claims bucket for as long as any
 * queue's job that takes it within the lookback may read it. result: the event, with its id.
 */
export async function bufferEvent(
  deps: Pick<Engine, "store" | "claims" | "queues" | "app">,
  event: { name: string; match: string; json: string },
  at: number,
): Promise<BufferedEvent> {
  const kept = lookbackMs(deps.app, event.name) + RUN_ALLOWANCE_MS;
  const retention = {
    done: Math.max(...deps.queues.map((q) => q.retentionDays.done)),
    dead: Math.max(...deps.queues.map((q) => q.retentionDays.dead)),
  };
  const body = await stowEventData(deps.claims, event.json, at, durableKeepUntil(at, at + kept, retention));
  const buffered: BufferedEvent = { id: ulid(at), at, ...body };
  await putBufferedEvent(deps.store, event.name, event.match, buffered, Math.ceil((at + kept) / 1000));
  return buffered;
}

/** A wait's pointer as its suspend wrote it, with the time from which it takes buffered events. */
export interface LookbackWaiter {
  event: string;
  match: string;
  step: string;
  since: number;
  /** In a race: the branch the event wins. */
  branch?: string | undefined;
}

/**
 * W3, after a landed suspend: the oldest buffered event of the pair since the wait's `since` that
 * this job has not taken resumes it (its pointer then goes). result: whether this call resumed it
 * (false when there is none, or the event's own delivery won).
 */
export async function resumeFromBuffer(
  deps: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics">,
  item: JobItem,
  waiter: LookbackWaiter,
  fence: string,
): Promise<boolean> {
  const { event, match, step } = waiter;
  const taken = new Set(
    Object.values(item.steps ?? {})
      .filter((r) => r.e !== undefined)
      .filter(
        (r) =>
          (r.event === event && r.match === match) ||
          r.race?.some((b) => b.event === event && b.match === match),
      )
      .map((r) => r.e),
  );
  const found = await listBufferedEvents(deps.store, event, match, waiter.since, taken.size + 1);
  const next = found.find((b) => !taken.has(b.id));
  if (!next) return false;
  const body = next.v !== undefined ? { v: next.v } : { o: next.o };
  const data = { ...body, e: next.id, ...(waiter.branch !== undefined ? { w: waiter.branch } : {}) };
  if (!(await resumeWaitingJob(deps, item, { event, match, step }, data))) return false;
  await deleteEventWaiter(deps.store, event, match, item.id, { step, putBy: { lease: fence } });
  if (waiter.branch !== undefined) await loseRace(deps, item, step, waiter.branch);
  return true;
}
