import { ConditionalCheckFailedException, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import {
  DeleteCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  UpdateCommand,
} from "@aws-sdk/lib-dynamodb";
import { unmarshall } from "@aws-sdk/util-dynamodb";
import type { Clock } from "../clock.ts";
import { type TableLayout, tableLayout } from "../declarations/scale.ts";
import { ItemTooLarge, StoreConflict } from "../errors.ts";
import { type Condition, Expr, type Update } from "./expression.ts";

export interface StoreContext {
  doc: DynamoDBDocumentClient;
  table: string;
  clock: Clock;
  /** How items spread over partitions, from the app's declared rate (lib/declarations/scale.ts). */
  layout: TableLayout;
}

export function createStoreContext(
  client: DynamoDBClient,
  table: string,
  clock: Clock,
  layout: TableLayout = tableLayout(undefined),
): StoreContext {
  const doc = DynamoDBDocumentClient.from(client, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
  });
  return { doc, table, clock, layout };
}

export interface ConflictOptions {
  /** The caller decides from the current item; false when a lost race needs no further look. */
  readCurrent?: boolean;
}

/**
 * Runs one conditional write. A lost condition becomes StoreConflict, carrying the item as it is now
 * when the caller wants it: DynamoDB returns it with the error (ReturnValuesOnConditionCheckFailure),
 * emulators that don't get one strongly consistent read, which only losing races pay for.
 */
export async function conditionalWrite<T>(
  ctx: StoreContext,
  operation: string,
  key: Record<string, string>,
  write: () => Promise<T>,
  { readCurrent = true }: ConflictOptions = {},
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isItemSizeRefusal(err)) throw new ItemTooLarge(operation);
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    if (!readCurrent) throw new StoreConflict(operation, undefined);
    const current = err.Item
      ? (unmarshall(err.Item) as Record<string, unknown>)
      : (
          await ctx.doc.send(
            new GetCommand({
              TableName: ctx.table,
              Key: key,
              ConsistentRead: true,
              ReturnConsumedCapacity: "TOTAL",
            }),
          )
        ).Item;
    throw new StoreConflict(operation, current);
  }
}

/**
 * DynamoDB's refusal of an item over 400 KB: a ValidationException "Item size has exceeded the maximum
 * allowed size" (PutItem) or "Item size to update has exceeded …" (UpdateItem); the emulators say the same.
 */
function isItemSizeRefusal(err: unknown): boolean {
  return (
    err instanceof Error &&
    err.name === "ValidationException" &&
    /item size (to update )?has exceeded the maximum allowed size/i.test(err.message)
  );
}

/**
 * What every conditional write sends besides its own verb: the table, the condition (rendered after
 * anything else that used `e`, so all placeholders are in), and the item back on a lost condition
 * when the caller wants it.
 */
function conditionalParts(ctx: StoreContext, e: Expr, condition: Condition, options: ConflictOptions) {
  const ConditionExpression = condition(e);
  return {
    TableName: ctx.table,
    ConditionExpression,
    ...e.params(),
    ...(options.readCurrent === false ? {} : { ReturnValuesOnConditionCheckFailure: "ALL_OLD" as const }),
    ReturnConsumedCapacity: "TOTAL" as const,
  };
}

/**
 * One conditional UpdateItem: composes the update and its condition on one Expr, returns the new
 * item, and turns a lost condition into StoreConflict.
 */
export async function conditionalUpdate<T = Record<string, unknown>>(
  ctx: StoreContext,
  operation: string,
  key: Record<string, string>,
  build: (e: Expr) => { update: Update; condition: Condition },
  options: ConflictOptions = {},
): Promise<T> {
  const e = new Expr();
  const { update, condition } = build(e);
  const UpdateExpression = update.toString();
  const parts = conditionalParts(ctx, e, condition, options);
  const out = await conditionalWrite(
    ctx,
    operation,
    key,
    () => ctx.doc.send(new UpdateCommand({ ...parts, Key: key, UpdateExpression, ReturnValues: "ALL_NEW" })),
    options,
  );
  // The item after the write, in the shape the operation's caller declares for its key.
  return (out.Attributes ?? {}) as T;
}

/**
 * One conditional UpdateItem that asks DynamoDB for no item back, for a role IAM limits to some
 * attributes (`dynamodb:Attributes`, the token callback's: lib/deploy-plan/grants.ts): such a role
 * may not have the whole item returned, so the write sends ReturnValues NONE and no
 * ReturnValuesOnConditionCheckFailure (`dynamodb:ReturnValues` is NONE). A lost condition becomes
 * StoreConflict; when the caller wants the item as it is now, one consistent GetItem reads it.
 */
export async function conditionalUpdateNoReturn(
  ctx: StoreContext,
  operation: string,
  key: Record<string, string>,
  build: (e: Expr) => { update: Update; condition: Condition },
  options: ConflictOptions = {},
): Promise<void> {
  const e = new Expr();
  const { update, condition } = build(e);
  const UpdateExpression = update.toString();
  // Never the item back with a lost condition either: conditionalWrite reads it when the caller wants it.
  const parts = conditionalParts(ctx, e, condition, { readCurrent: false });
  await conditionalWrite(
    ctx,
    operation,
    key,
    () => ctx.doc.send(new UpdateCommand({ ...parts, Key: key, UpdateExpression, ReturnValues: "NONE" })),
    options,
  );
}

/** One conditional PutItem of a whole item; a lost condition becomes StoreConflict. */
export async function conditionalPut(
  ctx: StoreContext,
  operation: string,
  item: Record<string, unknown> & { pk: string; sk: string },
  condition: Condition,
  options: ConflictOptions = {},
): Promise<void> {
  const parts = conditionalParts(ctx, new Expr(), condition, options);
  await conditionalWrite(
    ctx,
    operation,
    { pk: item.pk, sk: item.sk },
    () => ctx.doc.send(new PutCommand({ ...parts, Item: item })),
    options,
  );
}

/**
 * One conditional DeleteItem; a lost condition becomes StoreConflict (with the item as it is now,
 * when the caller wants it).
 */
export async function conditionalDelete(
  ctx: StoreContext,
  operation: string,
  key: Record<string, string>,
  condition: Condition,
  options: ConflictOptions = {},
): Promise<void> {
  const parts = conditionalParts(ctx, new Expr(), condition, options);
  await conditionalWrite(
    ctx,
    operation,
    key,
    () => ctx.doc.send(new DeleteCommand({ ...parts, Key: key })),
    options,
  );
}

/**
 * A conditional write whose lost condition is an answer, not an error: `lost` turns the item as it
 * is now (typed as the caller's item, undefined when missing or not read) into the operation's
 * result. Other errors propagate.
 */
export async function orOnConflict<T, R, C = Record<string, unknown>>(
  write: Promise<T>,
  lost: (current: C | undefined) => R | Promise<R>,
): Promise<T | R> {
  try {
    return await write;
  } catch (err) {
    if (err instanceof StoreConflict) return lost(err.current as C | undefined);
    throw err;
  }
}

/** true when the write landed, false when its condition lost; other errors propagate. */
export function wonRace(write: Promise<unknown>): Promise<boolean> {
  return orOnConflict(
    write.then(() => true),
    () => false,
  );
}
