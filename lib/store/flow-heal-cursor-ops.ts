import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { attributeMissing, revisionIs } from "./conditions.ts";
import { conditionalUpdate, type StoreContext, wonRace } from "./context.ts";
import { Update } from "./expression.ts";
import { flowHealCursorKey } from "./keys.ts";
import { stampFormat } from "./stored-formats.ts";

/**
 * The reaper's place in the parked index between runs (docs/architecture.md §20): a run goes on
 * from where the last one stopped, instead of from shard 0, so a waiting key far along the index is
 * looked at within a bounded number of runs however many keys wait before it.
 */
export interface HealCursor {
  /** The parked-index shard to go on in. */
  shard: number;
  /** The sort key to go on after in that shard ("" for its start). */
  after: string;
  /** Bumped by each move: a run's move lands only if no other run moved it since its read. */
  revision: number;
}

const START: HealCursor = { shard: 0, after: "", revision: 0 };

/** readHealCursor — the cursor as last stored (strongly consistent); the index's start when none is. */
export async function readHealCursor(ctx: StoreContext): Promise<HealCursor> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: flowHealCursorKey,
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const item = out.Item as Partial<HealCursor> | undefined;
  const revision = item?.revision ?? 0;
  if (typeof item?.shard !== "number" || typeof item.after !== "string") return { ...START, revision };
  return { shard: item.shard, after: item.after, revision };
}

/**
 * moveHealCursor — stores where this run stopped.
 * input: the cursor as this run read it, and where the next run goes on.
 * condition: no cursor yet (when read as missing), or its revision unchanged since the read: of two
 *   reapers that overlap, only the first to finish moves it, and the other's look is not lost
 *   (it covered the same keys, or fewer).
 * result: true when stored; false when another run moved it first (nothing to do: it is current).
 */
export function moveHealCursor(
  ctx: StoreContext,
  read: HealCursor,
  to: { shard: number; after: string },
  now: number,
): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "moveHealCursor",
      flowHealCursorKey,
      (e) => ({
        update: stampFormat(new Update(e), "flowHealCursor")
          .set("shard", to.shard)
          .set("after", to.after)
          .set("revision", read.revision + 1)
          .set("updatedAt", now),
        condition: read.revision === 0 ? attributeMissing("pk") : revisionIs(read.revision),
      }),
      { readCurrent: false },
    ),
  );
}
