import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { attributeBefore, attributeMissing } from "./conditions.ts";
import { conditionalUpdate, type StoreContext, wonRace } from "./context.ts";
import { or, Update } from "./expression.ts";
import { queueStateKey } from "./keys.ts";

export interface QueueState {
  cooldownUntil?: number;
}

/** getQueueState — the queue's runtime item (cooldown). Eventually consistent: workers cache it. */
export async function getQueueState(ctx: StoreContext, queue: string): Promise<QueueState> {
  const out = await ctx.doc.send(
    new GetCommand({ TableName: ctx.table, Key: queueStateKey(queue), ReturnConsumedCapacity: "TOTAL" }),
  );
  return (out.Item ?? {}) as QueueState;
}

/**
 * coolDown — a handler reported Throttled: the whole queue waits.
 * condition: no cooldown yet, or one that ends sooner (cooldowns only ever extend).
 * result: true when this call extended it.
 */
export async function coolDown(ctx: StoreContext, queue: string, until: number): Promise<boolean> {
  return wonRace(
    conditionalUpdate(
      ctx,
      "coolDown",
      queueStateKey(queue),
      (e) => ({
        update: new Update(e).set("cooldownUntil", until),
        condition: or(attributeMissing("cooldownUntil"), attributeBefore("cooldownUntil", until)),
      }),
      { readCurrent: false },
    ),
  );
}
