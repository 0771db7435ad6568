import { GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { attributeBefore, attributeMissing } from "./conditions.ts";
import { conditionalUpdate, type StoreContext, wonRace } from "./context.ts";
import { Expr, or, Update } from "./expression.ts";
import { queueStateKey } from "./keys.ts";
import { stampFormat } from "./stored-formats.ts";

/**
 * The queue's one runtime item: the cooldown a throttle set, and the operator's intent (pause and
 * setting overrides). Absent attributes mean "as declared".
 */
export interface QueueState {
  cooldownUntil?: number;
  paused?: boolean;
  maxConcurrency?: number;
  backoffBaseSeconds?: number;
  backoffMaxSeconds?: number;
  retentionDoneDays?: number;
  retentionDeadDays?: number;
  updatedAt?: number;
}

/** getQueueState — the queue's runtime item. Eventually consistent: workers cache it. */
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
        update: stampFormat(new Update(e).set("cooldownUntil", until), "queueState"),
        condition: or(attributeMissing("cooldownUntil"), attributeBefore("cooldownUntil", until)),
      }),
      { readCurrent: false },
    ),
  );
}

/**
 * setQueueConfig — records an operator's intent (pause/resume, setting overrides).
 * input: the attributes to set. condition: none; config is last-writer-wins per attribute, and
 *   leaves the cooldown alone. result: the whole state after the write.
 */
export async function setQueueConfig(
  ctx: StoreContext,
  queue: string,
  attrs: Omit<QueueState, "cooldownUntil" | "updatedAt">,
): Promise<QueueState> {
  const e = new Expr();
  const update = stampFormat(new Update(e).setAll(attrs).set("updatedAt", ctx.clock.now()), "queueState");
  const out = await ctx.doc.send(
    new UpdateCommand({
      TableName: ctx.table,
      Key: queueStateKey(queue),
      UpdateExpression: update.toString(),
      ...e.params(),
      ReturnValues: "ALL_NEW",
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  return (out.Attributes ?? {}) as QueueState;
}
