import { ConditionalCheckFailedException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Clock } from "../clock.ts";
import { StoreConflict } from "../errors.ts";
import { type Condition, Expr, type Update } from "./expression.ts";

export interface StoreContext {
  doc: DynamoDBDocumentClient;
  table: string;
  clock: Clock;
}

export function createStoreContext(client: DynamoDBClient, table: string, clock: Clock): StoreContext {
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { doc, table, clock };
}

/**
 * Runs one conditional write. A lost condition becomes StoreConflict carrying the item as it is now:
 * DynamoDB returns it with the error (ReturnValuesOnConditionCheckFailure), emulators that don't
 * get one strongly consistent read, which only losing races pay for.
 */
export async function conditionalWrite<T>(
  ctx: StoreContext,
  operation: string,
  key: Record<string, string>,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    const current = err.Item
      ? (unmarshall(err.Item) as Record<string, unknown>)
      : (await ctx.doc.send(new GetCommand({ TableName: ctx.table, Key: key, ConsistentRead: true }))).Item;
    throw new StoreConflict(operation, current);
  }
}

export function isConflict(err: unknown): err is StoreConflict {
  return err instanceof StoreConflict;
}

/**
 * One conditional UpdateItem: composes the update and its condition on one Expr, returns the new
 * item, and turns a lost condition into StoreConflict.
 */
export async function conditionalUpdate(
  ctx: StoreContext,
  operation: string,
  key: Record<string, string>,
  build: (e: Expr) => { update: Update; condition: Condition },
): Promise<Record<string, unknown>> {
  const e = new Expr();
  const { update, condition } = build(e);
  const UpdateExpression = update.toString();
  const ConditionExpression = condition(e);
  const out = await conditionalWrite(ctx, operation, key, () =>
    ctx.doc.send(
      new UpdateCommand({
        TableName: ctx.table,
        Key: key,
        UpdateExpression,
        ConditionExpression,
        ...e.params(),
        ReturnValues: "ALL_NEW",
        ReturnValuesOnConditionCheckFailure: "ALL_OLD",
        ReturnConsumedCapacity: "TOTAL",
      }),
    ),
  );
  return out.Attributes ?? {};
}
