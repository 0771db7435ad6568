import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { AdaptedRate } from "../job/flow-adaptive.ts";
import { encodeFlowKey, type FlowKey } from "../job/flow-key.ts";
import type { StoreTransitions } from "../job/status.ts";
import { attributeEquals, attributeExists, isDue, itemMissing, not, statusIn } from "./conditions.ts";
import { conditionalPut, conditionalUpdate, orOnConflict, type StoreContext, wonRace } from "./context.ts";
import { and, type Condition, or, Update } from "./expression.ts";
import type { JobSeed } from "./job-item.ts";
import { flowKeyStateKey, jobKey, parkIndexKeys } from "./keys.ts";
import { seedIfMissing } from "./lease-ops.ts";
import { checkFormat, formatStamp } from "./stored-formats.ts";

/**
 * A flow key's places and waiting line (docs/architecture.md §20). The key's state item holds the
 * jobs that hold its places (`holders`: job id → when the place was given) and its cool-down; a
 * job that finds no place is parked: its item enters the key's line in the status index and its
 * message is deleted, until a place frees and the job's message is sent again.
 */

export interface FlowKeyState {
  holders: Record<string, number>;
  coolUntil?: number;
  /** An adaptive rate's in force, while below its declared limit (lib/store/flow-cool-ops.ts). */
  adaptedRate?: AdaptedRate;
}

/**
 * Places leave a job's status as it is. Parking writes a job's first item as queued, and a due
 * scheduled job (promoted, or a durable job whose wait ended) that parks is queued from then on: it
 * waits in the line as any queued job does, and is handed a place as one.
 */
export const flowKeyTransitions = [
  ["missing", "queued"],
  ["scheduled", "queued"],
] as const satisfies StoreTransitions;

const holderName = (id: string) => `holders.${id}`;
const holds = (id: string): Condition => attributeExists(holderName(id));
/** Fewer than `limit` of the key's places are held. */
const placeFree =
  (limit: number): Condition =>
  (e) =>
    `size(${e.name("holders")}) < ${e.value(limit)}`;

/** The key's state, read strongly; a key never used has no places held. */
export async function readFlowKeyState(ctx: StoreContext, fk: FlowKey): Promise<FlowKeyState> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: flowKeyStateKey(fk),
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const item = out.Item as Partial<FlowKeyState> | undefined;
  if (item) checkFormat("flowKey", item, `flow key ${encodeFlowKey(fk)}`);
  return {
    holders: item?.holders ?? {},
    ...(item?.coolUntil !== undefined ? { coolUntil: item.coolUntil } : {}),
    ...(item?.adaptedRate !== undefined ? { adaptedRate: item.adaptedRate } : {}),
  };
}

/**
 * takeKeyPlace — a job takes one of its key's places.
 * input: the key, the job, the key's concurrency, now.
 * condition: the key's state item is missing (its first place: created), or the job already holds
 *   a place (a redelivery), or fewer than `limit` are held.
 * result: true when the job holds a place; false when the key is full (or the state changed).
 */
export function takeKeyPlace(
  ctx: StoreContext,
  fk: FlowKey,
  id: string,
  limit: number,
  now: number,
): Promise<boolean> {
  return placeWrite(ctx, "takeKeyPlace", fk, id, now, or(holds(id), placeFree(limit)));
}

/**
 * A place given to `id` at `now` under `condition`, in one write for a key used before (its state
 * item exists, however many places it holds): the update first. Refused, the item as it is tells a
 * key whose condition failed (false) from a key never used, whose item is created with this first
 * place (a put; lost to another first place, the update once more).
 */
function placeWrite(
  ctx: StoreContext,
  op: string,
  fk: FlowKey,
  id: string,
  now: number,
  condition: Condition,
): Promise<boolean> {
  const state = flowKeyStateKey(fk);
  const set = (readCurrent: boolean) =>
    conditionalUpdate(
      ctx,
      op,
      state,
      (e) => ({ update: new Update(e).set(holderName(id), now), condition }),
      { readCurrent },
    );
  const create = () =>
    conditionalPut(ctx, op, { ...state, holders: { [id]: now }, ...formatStamp("flowKey") }, itemMissing, {
      readCurrent: false,
    });
  return orOnConflict(
    set(true).then(() => true),
    (current) => current === undefined && wonRace(orOnConflict(create(), () => set(false))),
  );
}

/**
 * grantKeyPlace — the repair gives a free place to a job that holds none (a parked job, the
 * reaper's or a gate's look after parking).
 * condition: the key's state item is missing (a key never used: the jobs of the enqueue that parked
 *   the line's first were all sent, then unwound), or the job holds no place yet and fewer than
 *   `limit` are held: of two repairs looking at once, one grants and sends, the other doesn't send
 *   the job twice.
 * result: true when granted.
 */
export function grantKeyPlace(ctx: StoreContext, fk: FlowKey, id: string, limit: number, now: number) {
  return placeWrite(ctx, "grantKeyPlace", fk, id, now, and(not(holds(id)), placeFree(limit)));
}

/**
 * renewKeyPlace — the repair renews the place of a job that got one but never started (its message
 * went missing), before sending the job again.
 * condition: the place was given at `since`, as the caller read: of two repairs, one renews.
 * result: true when renewed.
 */
export function renewKeyPlace(ctx: StoreContext, fk: FlowKey, id: string, since: number, now: number) {
  return wonRace(
    conditionalUpdate(
      ctx,
      "renewKeyPlace",
      flowKeyStateKey(fk),
      (e) => ({
        update: new Update(e).set(holderName(id), now),
        condition: attributeEquals(holderName(id), since),
      }),
      { readCurrent: false },
    ),
  );
}

/** A place changing hands: the job that held it (its run ended), the job that takes it. */
export interface PlacePass {
  from: string;
  to: string;
}

/**
 * passKeyPlaces — jobs whose runs ended hand their places to the key's next waiting jobs, in one
 * write (several when hand-overs of the key in one process joined: lib/flow/hand-over-turns.ts).
 * input: the key, the passes (each `from` distinct, each `to` distinct), now.
 * condition: every `from` still holds a place, and no `to` holds one yet (another run's pass may
 *   already be on its way to it).
 * result: true when every place changed hands; false when none did.
 */
export function passKeyPlaces(ctx: StoreContext, fk: FlowKey, passes: readonly PlacePass[], now: number) {
  return wonRace(
    conditionalUpdate(
      ctx,
      "passKeyPlaces",
      flowKeyStateKey(fk),
      (e) => {
        const update = new Update(e).remove(...passes.map((p) => holderName(p.from)));
        for (const p of passes) update.set(holderName(p.to), now);
        const condition = and(...passes.flatMap((p) => [holds(p.from), not(holds(p.to))]));
        return { update, condition };
      },
      { readCurrent: false },
    ),
  );
}

/**
 * freeKeyPlaces — places given back: a run that ended with no job waiting, or places the caller
 * found stale (their job ended, or its owner died). Each is freed only if still held as read.
 * input: the key, job id → the time its place was given (as read). result: true when freed.
 */
export function freeKeyPlaces(ctx: StoreContext, fk: FlowKey, places: Record<string, number>) {
  const ids = Object.keys(places);
  if (ids.length === 0) return Promise.resolve(true);
  return wonRace(
    conditionalUpdate(
      ctx,
      "freeKeyPlaces",
      flowKeyStateKey(fk),
      (e) => ({
        update: new Update(e).remove(...ids.map(holderName)),
        condition: and(...ids.map((id) => attributeEquals(holderName(id), places[id] as number))),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * parkJob — a job whose key is full waits in the key's line; the caller then deletes its message.
 * input: the job's seed (its message: a lean job has no item yet), the flow key whose line it waits
 *   in (the seed's kind; the limit that refused it).
 * condition: the job's item is missing (built here from the message), queued, or scheduled and due
 *   at `now` (its message is here: promoted, or a durable job whose wait ended), which becomes queued.
 * result: true when parked; false when the job is no longer queued (it ran, or was cancelled).
 */
export function parkJob(ctx: StoreContext, seed: JobSeed, fk: FlowKey, now: number): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "parkJob",
      jobKey(seed.id),
      (e) => {
        const update = seedIfMissing(new Update(e), seed)
          .set("status", "queued")
          .setIfAbsent("attempts", 0)
          .set("parked", true)
          .setAll(parkIndexKeys(fk, seed));
        // Which of its kind's limits' lines it is in (absent: the first's, as a lone limit's).
        if (fk.limit === undefined) update.remove("parkedIn");
        else update.set("parkedIn", fk.limit);
        // A scheduled job's message is out once it is promoted: it parks as a queued one does.
        return {
          update,
          condition: or(itemMissing, statusIn("queued"), and(statusIn("scheduled"), isDue(now))),
        };
      },
      { readCurrent: false },
    ),
  );
}

/**
 * leaveLine — a job of several flow limits that was handed a place from a line, then refused by a
 * later limit's cool-down or rate, waits for that as a message, not in the line: it leaves the line
 * so no hand-over sends it again meanwhile (a second message, and its rate taken from twice).
 * condition: the job is queued and parked. result: true when it left a line; false when in none.
 */
export function leaveLine(ctx: StoreContext, id: string): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "leaveLine",
      jobKey(id),
      (e) => ({
        update: new Update(e).remove("parked", "parkedIn", "gsi1pk", "gsi1sk"),
        condition: and(statusIn("queued"), attributeExists("parked")),
      }),
      { readCurrent: false },
    ),
  );
}
