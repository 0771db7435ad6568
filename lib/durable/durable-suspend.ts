import { durableKeepUntil, keptUntil, restowDurable } from "../claims/durable-bodies.ts";
import { longestRetentionExpiry } from "../retention.ts";
import type { RetentionDays, SuspendWrite } from "../services/durable-service.ts";
import type { Suspension } from "../services/suspension.ts";
import { deleteEventWaiter, putEventWaiter } from "../store/event-waiter-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { getToken } from "../store/token-ops.ts";
import { childEnded } from "./child-end.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { resumeFromBuffer } from "./event-lookback.ts";
import { resumeWaitingJob } from "./resume-waiting.ts";

/**
 * Before a durable run's suspend is written (docs/architecture.md §22): an event wait's pointer, so
 * that an event which finds the job waiting also finds it, kept as long as the job may wait (it
 * carries the run's lease token, `fence`, which tells its version from a later run's); and the
 * job's bodies in the claims bucket that the wait would outlast (the wait, a week to end after it,
 * its queue's `retentionDays`), each copied under a class that covers it. result: those records'
 * new keys, which the suspend's own write sets (a suspend that loses its fence leaves the copies to
 * expire, the records unchanged).
 */
export async function beforeSuspend(
  deps: DurableDeps,
  item: JobItem,
  s: Suspension,
  fence: string,
  retentionDays: RetentionDays,
): Promise<{ name: string; o: string }[]> {
  for (const w of s.waiters()) {
    const expiresAt = longestRetentionExpiry(s.waiting.until, deps.queues);
    const pointer = { jobId: item.id, queue: item.queue, step: w.step, lease: fence, branch: w.branch };
    await putEventWaiter(deps.store, w.event, w.match, pointer, expiresAt);
  }
  const now = deps.clock.now();
  const needed = durableKeepUntil(now, s.waiting.until, retentionDays);
  const moved: { name: string; o: string }[] = [];
  for (const body of s.bodies) {
    // A record's time is moments after its object's write, or before it (an event's data comes after
    // its wait's record): keptUntil takes claimKey's day of margin back for that.
    if ((keptUntil(body.o, body.t) ?? 0) >= needed) continue;
    const o = await restowDurable(deps.claims, item.id, { step: body.name, key: body.o }, now, needed);
    if (o !== undefined) moved.push({ name: body.name, o });
  }
  return moved;
}

/**
 * After the suspend's write. One that did not land after its pointer was written (the job was
 * cancelled meanwhile, or the run lost its lease): this run's pointer goes, only its own version (a
 * new owner's run that wrote the same wait's pointer again keeps it). One that landed: a sleep within
 * SQS's longest delay sends its own wake-up (the message the run came with, delayed); longer ones are
 * promoted by the reaper at their end. A token completed while the run was deciding to wait found
 * the job still running and resumed nothing, so the run looks once more and resumes the job itself
 * (whoever resumes first wins the write); an event wait likewise reads the events kept for its
 * lookback (the ordering: lib/durable/event-lookback.ts), and a child job (`ctx.invoke`) that
 * ended meanwhile resumes it likewise.
 */
export async function afterSuspend(
  deps: DurableDeps,
  s: Suspension,
  { fence, msg, item, landed }: SuspendWrite,
  now: number,
): Promise<void> {
  if (!landed) {
    for (const w of s.waiters()) {
      const version = { step: w.step, putBy: { lease: fence } };
      await deleteEventWaiter(deps.store, w.event, w.match, item.id, version);
    }
    return;
  }
  for (const w of s.waiters()) if (await resumeFromBuffer(deps, item, w, fence)) return;
  if (s.wakesByMessage(now)) {
    const delaySeconds = Math.max(0, Math.ceil((s.waiting.until - now) / 1000));
    await deps.transport.send({ message: msg, delaySeconds });
    return;
  }
  for (const token of s.waiting.token !== undefined ? [s.waiting.token] : (s.waiting.tokens ?? []))
    if ((await getToken(deps.store, token))?.status === "completed")
      if (await resumeWaitingJob(deps, item, { token })) return;
  // A child that ended while this run decided to wait for it found its parent running: look again.
  const child = s.waiting.child === undefined ? undefined : await getJob(deps.store, s.waiting.child);
  if (child) await childEnded(deps, child);
}
