import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { eventWaitersPartition } from "../job/key-layout.ts";
import type { StoreTransitions } from "../job/status.ts";
import { attributeEquals, attributeMissing } from "./conditions.ts";
import { conditionalDelete, type StoreContext, wonRace } from "./context.ts";
import { and, Expr } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { eventWaiterKey } from "./keys.ts";
import { checkFormat, formatStamp } from "./stored-formats.ts";

/**
 * The jobs waiting for an event of one (name, match) pair (docs/architecture.md §22). A waiter is a
 * pointer only: the job item's `waiting` decides whether it still waits, so a stale waiter (its job
 * cancelled, timed out or resumed) resumes nothing. Each ending of a wait deletes its pointer.
 */
export interface EventWaiter {
  jobId: string;
  queue: string;
  /** The wait's step name in the job. */
  step: string;
  /**
   * The lease token of the run that wrote it: which version of the pointer this is, so a delete
   * decided on one version never takes a later run's. Undefined on pointers written before it was kept.
   */
  lease?: string | undefined;
  /** In a race (`ctx.waitForAny`, whose name is `step`): the branch this event would win. */
  branch?: string | undefined;
}

/**
 * putEventWaiter — a job is about to wait for an event; written before the job's suspend, so an
 * event that finds the job waiting always finds its waiter.
 * input: the pair, the job, step and run's lease token, the TTL (epoch s).
 * condition: none (a rerun's put writes the same pointer, with its own lease). result: written.
 */
export async function putEventWaiter(
  ctx: StoreContext,
  event: string,
  match: string,
  waiter: EventWaiter & { lease: string },
  expiresAt: number,
): Promise<void> {
  await ctx.doc.send(
    new PutCommand({
      TableName: ctx.table,
      Item: {
        ...eventWaiterKey(event, match, waiter.jobId),
        queue: waiter.queue,
        step: waiter.step,
        lease: waiter.lease,
        ...(waiter.branch !== undefined ? { branch: waiter.branch } : {}),
        expiresAt,
        ...formatStamp("eventWaiter"),
      },
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
}

export const putEventWaiterTransitions = [] as const satisfies StoreTransitions;

/** One page of a pair's waiters, and where the next starts (undefined after the last). */
export interface WaiterPage {
  waiters: EventWaiter[];
  next?: Record<string, unknown> | undefined;
}

/**
 * listEventWaiters — one page of the pair's waiters, in job id order (strongly consistent), from
 * `after` (a page's `next`).
 */
export async function listEventWaiters(
  ctx: StoreContext,
  event: string,
  match: string,
  { after, limit }: { after?: Record<string, unknown> | undefined; limit: number },
): Promise<WaiterPage> {
  const e = new Expr();
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      KeyConditionExpression: `${e.name("pk")} = ${e.value(eventWaitersPartition(event, match))}`,
      ...e.params(),
      ConsistentRead: true,
      Limit: limit,
      ...(after ? { ExclusiveStartKey: after } : {}),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  // A waiter a newer version wrote is refused (StoredFormatTooNew), never taken for one of ours.
  const known = (out.Items ?? []).map((item) =>
    checkFormat("eventWaiter", item, `event waiter ${String(item.pk)}/${String(item.sk)}`),
  );
  const waiters = known.map(
    (item): EventWaiter => ({
      jobId: String(item.sk),
      queue: String(item.queue),
      step: String(item.step),
      lease: typeof item.lease === "string" ? item.lease : undefined,
      branch: typeof item.branch === "string" ? item.branch : undefined,
    }),
  );
  return { waiters, next: out.LastEvaluatedKey };
}

/** Which pointer a delete may take: any of the wait's (its step), or only the version read (`putBy`). */
export interface WaiterVersion {
  step: string;
  putBy?: { lease: string | undefined };
}

/**
 * deleteEventWaiter — a wait is over (resumed, timed out, its job cancelled), or its pointer can no
 * longer resume anything: the pointer goes.
 * input: the pair, the job id, the wait's step, and the version read when the caller decided on one.
 * condition: the pointer is of that step (a later wait of the same job on the same pair, under
 *   another step, stays) AND, with `putBy`, written by that run (a later run's put of the same wait stays).
 * result: whether it was deleted; false when it had gone already or is another's.
 */
export async function deleteEventWaiter(
  ctx: StoreContext,
  event: string,
  match: string,
  jobId: string,
  version: WaiterVersion,
): Promise<boolean> {
  const ofStep = attributeEquals("step", version.step);
  const lease = version.putBy?.lease;
  const written = version.putBy
    ? lease === undefined
      ? attributeMissing("lease")
      : attributeEquals("lease", lease)
    : undefined;
  const condition = written ? and(ofStep, written) : ofStep;
  return wonRace(
    conditionalDelete(ctx, "deleteEventWaiter", eventWaiterKey(event, match, jobId), condition, {
      readCurrent: false,
    }),
  );
}

export const deleteEventWaiterTransitions = [] as const satisfies StoreTransitions;

/**
 * A job that ended while it waited for an event (a cancel of the scheduled job) leaves its
 * pointer: deleted here, by its wait's step (the entry of the pair with the wait's timeout and no
 * data); a race's, each of its event branches' pointers.
 */
export async function deleteWaiterOfEnded(ctx: StoreContext, job: JobItem): Promise<void> {
  const w = job.waiting;
  if (w?.for === "any") {
    // A race's entry carries the pair of each of its event branches.
    const race = Object.entries(job.steps ?? {}).find(
      ([, r]) => r.race && r.w === undefined && r.until === w.until,
    );
    for (const b of race?.[1].race ?? [])
      if (b.event !== undefined && b.match !== undefined)
        await deleteEventWaiter(ctx, b.event, b.match, job.id, { step: race?.[0] ?? "" });
    return;
  }
  if (w?.for !== "event" || w.event === undefined || w.match === undefined) return;
  const step = Object.entries(job.steps ?? {}).find(
    ([, r]) =>
      r.event === w.event &&
      r.match === w.match &&
      r.until === w.until &&
      r.v === undefined &&
      r.o === undefined,
  )?.[0];
  if (step !== undefined) await deleteEventWaiter(ctx, w.event, w.match, job.id, { step });
}
