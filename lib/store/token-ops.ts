import { createHash } from "node:crypto";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import { attributeAfter, attributeEquals, formatKnown, itemMissing } from "./conditions.ts";
import {
  conditionalPut,
  conditionalUpdateNoReturn,
  orOnConflict,
  type StoreContext,
  wonRace,
} from "./context.ts";
import { and, Update } from "./expression.ts";
import { tokenKey } from "./keys.ts";
import { checkFormat, formatStamp, raiseFormat } from "./stored-formats.ts";

/**
 * A durable job's wait token (docs/architecture.md §22). Only the hash of its secret is kept: the
 * url that carries the secret lives in the job's step record, which only the job's readers see.
 * Tokens have no status machine of the job's: pending → completed, once, or pending → cancelled when
 * it lost its job's race (`ctx.waitForAny`); a timeout is read from `timeoutAt`, not written.
 */
export interface TokenItem {
  pk: string;
  sk: string;
  id: string;
  jobId: string;
  /** The job's queue: a resume puts the job back in its queue's scheduled index. */
  queue: string;
  /** The step it was created under. */
  step: string;
  status: "pending" | "completed" | "cancelled";
  secretHash: string;
  createdAt: number;
  timeoutAt: number;
  completedAt?: number;
  /** The completion's data: its JSON inline, or the key of its claims object. */
  v?: string;
  o?: string;
  /** TTL (epoch seconds). */
  expiresAt: number;
  /** The format version (lib/store/stored-formats.ts). */
  fv?: number;
}

/** What a token item keeps of its secret: the secret itself is in its url only. */
export const tokenSecretHash = (secret: string) => createHash("sha256").update(secret).digest("hex");

export type NewToken = Omit<TokenItem, "pk" | "sk" | "status" | "completedAt" | "v" | "o" | "fv">;

/**
 * putToken — a new token, before its step is recorded (a run that dies in between leaves an orphan
 * its TTL removes; the rerun makes another).
 * input: the token. condition: no item under its id (ids are fresh). result: written.
 */
export async function putToken(ctx: StoreContext, token: NewToken): Promise<void> {
  const item: TokenItem = { ...tokenKey(token.id), ...token, status: "pending", ...formatStamp("token") };
  await conditionalPut(ctx, "putToken", item as TokenItem & Record<string, unknown>, itemMissing, {
    readCurrent: false,
  });
}

export const putTokenTransitions = [] as const satisfies StoreTransitions;

export async function getToken(ctx: StoreContext, id: string): Promise<TokenItem | undefined> {
  const out = await ctx.doc.send(
    new GetCommand({
      TableName: ctx.table,
      Key: tokenKey(id),
      ConsistentRead: true,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const token = out.Item as TokenItem | undefined;
  return token && checkFormat("token", token, `token ${id}`);
}

export type CompleteTokenResult = { completed: true } | { completed: false; current?: TokenItem };

/**
 * Every attribute completeToken names: the key, what it sets, what its condition reads. The token
 * callback's role may update a token's item in these and no other (IAM's `dynamodb:Attributes`,
 * lib/deploy-plan/grants.ts); test/e2e/lambda-bundles.test.ts holds the real requests to it.
 */
export const COMPLETE_TOKEN_ATTRIBUTES = [
  "pk",
  "sk",
  "status",
  "completedAt",
  "v",
  "o",
  "secretHash",
  "timeoutAt",
] as const;

/**
 * completeToken — a token's one completion.
 * input: the token id, its secret's hash, the data (JSON inline or a claims object's key).
 * condition: pending AND the secret's hash matches AND its timeout has not passed.
 * result: completed (no item comes back: the callback's role may not read one through a write); or
 *   the token as it is now (missing, completed, timed out, or the secret was wrong), nothing written.
 */
export async function completeToken(
  ctx: StoreContext,
  id: string,
  secretHash: string,
  data: { v: string } | { o: string },
): Promise<CompleteTokenResult> {
  const now = ctx.clock.now();
  const write = conditionalUpdateNoReturn(ctx, "completeToken", tokenKey(id), (e) => ({
    update: new Update(e).set("status", "completed").set("completedAt", now).setAll(data),
    condition: and(
      attributeEquals("status", "pending"),
      attributeEquals("secretHash", secretHash),
      attributeAfter("timeoutAt", now),
    ),
  }));
  return orOnConflict(
    write.then((): CompleteTokenResult => ({ completed: true })),
    (current: TokenItem | undefined): CompleteTokenResult => ({
      completed: false,
      ...(current ? { current } : {}),
    }),
  );
}

export const completeTokenTransitions = [] as const satisfies StoreTransitions;

/**
 * cancelToken — a pending token lost its job's race (lib/durable/race.ts): a completion after it
 * answers 409.
 * input: the token id. condition: pending (a completion that landed first stays; its data is not
 *   the race's). result: whether it was cancelled.
 */
export async function cancelToken(ctx: StoreContext, id: string): Promise<boolean> {
  const write = conditionalUpdateNoReturn(
    ctx,
    "cancelToken",
    tokenKey(id),
    (e) => ({
      update: raiseFormat(new Update(e).set("status", "cancelled"), "token"),
      condition: and(attributeEquals("status", "pending"), formatKnown("token")),
    }),
    { readCurrent: false },
  );
  return wonRace(write);
}

export const cancelTokenTransitions = [] as const satisfies StoreTransitions;
