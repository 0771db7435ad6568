import { DeleteCommand, PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { eventWaiterKey, eventWaitersPartition } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

/**
 * The jobs waiting for an event of one (name, match) pair (docs/architecture.md §22). A waiter is a
 * pointer only: the job item's `waiting` decides whether it still waits, so a stale waiter (its job
 * cancelled, timed out or resumed) resumes nothing.
 */
export interface EventWaiter {
  jobId: string;
  queue: string;
  /** The wait's step name in the job. */
  step: string;
}

/**
 * putEventWaiter — a job is about to wait for an event; written before the job's suspend, so an
 * event that finds the job waiting always finds its waiter.
 * input: the pair, the job and step, the wait's timeout (ms), the TTL (epoch s).
 * condition: none (a rerun's put writes the same pointer). result: written.
 */
export async function putEventWaiter(
  ctx: StoreContext,
  event: string,
  match: string,
  waiter: EventWaiter,
  expiresAt: number,
): Promise<void> {
  await ctx.doc.send(
    new PutCommand({
      TableName: ctx.table,
      Item: {
        ...eventWaiterKey(event, match, waiter.jobId),
        queue: waiter.queue,
        step: waiter.step,
        expiresAt,
        ...formatStamp("eventWaiter"),
      },
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
}

export const putEventWaiterTransitions = [] as const satisfies StoreTransitions;

/** The most waiters one event resumes: a bigger fan-out is a group's job, not an event's. */
export const MAX_WAITERS_PER_EVENT = 1000;

/** listEventWaiters — the pair's waiters, at most MAX_WAITERS_PER_EVENT (strongly consistent). */
export async function listEventWaiters(
  ctx: StoreContext,
  event: string,
  match: string,
): Promise<EventWaiter[]> {
  const waiters: EventWaiter[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const e = new Expr();
    const out = await ctx.doc.send(
      new QueryCommand({
        TableName: ctx.table,
        KeyConditionExpression: `${e.name("pk")} = ${e.value(eventWaitersPartition(event, match))}`,
        ...e.params(),
        ConsistentRead: true,
        Limit: MAX_WAITERS_PER_EVENT - waiters.length,
        ...(start ? { ExclusiveStartKey: start } : {}),
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    for (const item of out.Items ?? [])
      waiters.push({ jobId: String(item.sk), queue: String(item.queue), step: String(item.step) });
    start = out.LastEvaluatedKey;
  } while (start && waiters.length < MAX_WAITERS_PER_EVENT);
  return waiters;
}

/** deleteEventWaiter — a resumed job's pointer goes. condition: none (gone already is fine). */
export async function deleteEventWaiter(
  ctx: StoreContext,
  event: string,
  match: string,
  jobId: string,
): Promise<void> {
  await ctx.doc.send(
    new DeleteCommand({
      TableName: ctx.table,
      Key: eventWaiterKey(event, match, jobId),
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
}

export const deleteEventWaiterTransitions = [] as const satisfies StoreTransitions;
