import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import { bufferedEventsPartition, indexSort } from "../job/key-layout.ts";
import type { StoreTransitions } from "../job/status.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { bufferedEventKey } from "./keys.ts";
import { checkFormat, formatStamp } from "./stored-formats.ts";

/**
 * An event POST /events keeps for its lookback (docs/architecture.md §22), so a wait that begins
 * after it (or whose pointer was written while the event was on its way) still finds it. Not a
 * pointer to anything: each wait that reads it takes it for itself; it is never consumed, and its
 * TTL (`expiresAt`) removes it.
 */
export interface BufferedEvent {
  /** The event's own id (a ULID of its arrival): a job records it with the data it resumed with. */
  id: string;
  /** When POST /events took it (ms, by the API's clock). */
  at: number;
  /** Its data's JSON inline, or `o`: the key of its claims object (over 8 KiB). */
  v?: string;
  o?: string;
}

/**
 * putBufferedEvent — an event arrived: it is kept for its lookback.
 * input: the pair, the event (id, time, data's body), the TTL (epoch s).
 * condition: none (its key is its own: the time and a fresh id). result: written.
 */
export async function putBufferedEvent(
  ctx: StoreContext,
  event: string,
  match: string,
  buffered: BufferedEvent,
  expiresAt: number,
): Promise<void> {
  await ctx.doc.send(
    new PutCommand({
      TableName: ctx.table,
      Item: {
        ...bufferedEventKey(event, match, buffered.at, buffered.id),
        id: buffered.id,
        at: buffered.at,
        ...(buffered.v !== undefined ? { v: buffered.v } : {}),
        ...(buffered.o !== undefined ? { o: buffered.o } : {}),
        expiresAt,
        ...formatStamp("bufferedEvent"),
      },
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
}

export const putBufferedEventTransitions = [] as const satisfies StoreTransitions;

/**
 * listBufferedEvents — the pair's events that came at or after `since` (ms), oldest first, at most
 * `limit` (strongly consistent: an event whose put returned before this query is in it). Items past
 * their TTL that DynamoDB has not removed yet are among them: the caller's `since` leaves them out.
 */
export async function listBufferedEvents(
  ctx: StoreContext,
  event: string,
  match: string,
  since: number,
  limit: number,
): Promise<BufferedEvent[]> {
  const e = new Expr();
  const pk = e.name("pk");
  const sk = e.name("sk");
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      KeyConditionExpression: `${pk} = ${e.value(bufferedEventsPartition(event, match))} AND ${sk} >= ${e.value(indexSort(Math.max(0, since), ""))}`,
      ...e.params(),
      ConsistentRead: true,
      Limit: limit,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return (out.Items ?? [])
    .map((stored) => checkFormat("bufferedEvent", stored, `buffered event ${String(stored.id)}`))
    .map((item) => ({
      id: String(item.id),
      at: Number(item.at),
      ...(typeof item.v === "string" ? { v: item.v } : {}),
      ...(typeof item.o === "string" ? { o: item.o } : {}),
    }));
}
