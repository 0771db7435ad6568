import * as z from "zod";
import { needsClaimCheck } from "../claims/claim-keys.ts";
import { durableKeepUntil, stepPart, stowDurable } from "../claims/durable-bodies.ts";
import { ClientError, issuesOf } from "../errors.ts";
import { MAX_STEP_NAME_CHARS } from "../job/durable.ts";
import { MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import { effectiveSettings } from "../queue-control/settings.ts";
import type { Engine } from "../services/engine-services.ts";
import { deleteEventWaiter, listEventWaiters } from "../store/event-waiter-ops.ts";
import { getQueueState } from "../store/queue-state.ts";
import { resumeJob } from "./resume-waiting.ts";

/** POST /events's body: an event's name, the value waits match on, and its data. */
export const EventRequest = z
  .object({
    name: z.string().min(1).max(MAX_STEP_NAME_CHARS),
    match: z.string().min(1).max(MAX_STEP_NAME_CHARS),
    data: z.unknown().optional(),
  })
  .strict();

type Retention = { done: number; dead: number };

/** A queue's retention in force (its declaration, an operator's override over it), read once per event. */
function retentionOf(engine: Pick<Engine, "store" | "queues">) {
  const read = new Map<string, Promise<Retention>>();
  const longest = {
    done: Math.max(...engine.queues.map((q) => q.retentionDays.done)),
    dead: Math.max(...engine.queues.map((q) => q.retentionDays.dead)),
  };
  return (queue: string): Promise<Retention> => {
    const declared = engine.queues.find((q) => q.name === queue);
    // A waiter of a queue no longer declared: as long as any queue keeps a job.
    if (!declared) return Promise.resolve(longest);
    let found = read.get(queue);
    if (!found) {
      found = getQueueState(engine.store, queue).then(
        (state) => effectiveSettings(declared, state).retentionDays,
      );
      read.set(queue, found);
    }
    return found;
  };
}

/**
 * An event (docs/architecture.md §22): every job waiting for its name and match value resumes with
 * its data (at most MAX_WAITERS_PER_EVENT). An event no job waits for is not kept: a wait that
 * begins later does not see it. result: how many jobs it resumed.
 */
export async function deliverEvent(
  engine: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics" | "queues">,
  raw: unknown,
): Promise<{ resumed: number }> {
  const parsed = EventRequest.safeParse(raw);
  if (!parsed.success)
    throw new ClientError("validation_error", "expected { name, match, data }", issuesOf(parsed.error));
  const { name, match, data } = parsed.data;
  const json = JSON.stringify(data ?? null);
  if (Buffer.byteLength(json) > MAX_PAYLOAD_BYTES)
    throw new ClientError(
      "payload_too_large",
      `an event's data is at most ${MAX_PAYLOAD_BYTES} bytes of JSON`,
    );
  const waiters = await listEventWaiters(engine.store, name, match);
  let resumed = 0;
  const now = engine.clock.now();
  const retention = retentionOf(engine);
  for (const waiter of waiters) {
    const job = { id: waiter.jobId, part: stepPart(waiter.step, `e${now}`) };
    // The event ends the job's wait: it runs from now (a later wait moves the object: durable-suspend.ts).
    // Data kept inline needs no retention, nor its read.
    const keepUntil = needsClaimCheck(json) ? durableKeepUntil(now, now, await retention(waiter.queue)) : now;
    const body = await stowDurable(engine.claims, job, json, now, keepUntil);
    if (
      !(await resumeJob(
        engine,
        { id: waiter.jobId, queue: waiter.queue },
        { event: name, match, step: waiter.step },
        body,
      ))
    )
      continue;
    resumed += 1;
    await deleteEventWaiter(engine.store, name, match, waiter.jobId);
  }
  return { resumed };
}
