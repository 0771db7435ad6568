import { createHash } from "node:crypto";
import * as z from "zod";
import { InvalidStoreInput } from "../errors.ts";
import { MAX_CURSOR_CHARS } from "../job/schemas.ts";
import type { IndexedStatus } from "../job/status.ts";
import { indexPartition } from "./keys.ts";

/**
 * listJobs' cursors: base64url JSON, opaque to the caller. Anything can come back in their place, so
 * a cursor is checked against the exact shape the store hands out before any of it reaches DynamoDB:
 * the exact key set, a shard in range, key attributes DynamoDB takes back as an ExclusiveStartKey,
 * and (on the index path) a key in the very partition its shard names. A wrong one is
 * InvalidStoreInput (a 400), never a DynamoDB ValidationException (a 500) and never a loop that
 * doesn't end (a shard of -1e308 never reaches the last shard by adding one).
 */

/** DynamoDB's key-size limits, in UTF-8 bytes: 2048 for a partition key, 1024 for a sort key. */
const keyAttribute = (maxBytes: number) =>
  z
    .string()
    .min(1)
    .refine((s) => s.isWellFormed() && Buffer.byteLength(s) <= maxBytes, "not a key DynamoDB has");
const partitionKey = keyAttribute(2048);
const sortKey = keyAttribute(1024);

/** A scan resumes after any item of the table: its primary key, nothing else. */
const TableKey = z.object({ pk: partitionKey, sk: sortKey }).strict();
/** A query of the status index resumes after an index entry: the table's key and the index's. */
const IndexKey = z.object({ pk: partitionKey, sk: sortKey, gsi1pk: partitionKey, gsi1sk: sortKey }).strict();

const IndexCursor = z
  .object({
    shard: z.number().int().min(0),
    key: IndexKey.optional(),
  })
  .strict();
export type IndexCursor = z.infer<typeof IndexCursor>;

const ScanCursor = z.object({ key: TableKey }).strict();
export type ScanCursor = z.infer<typeof ScanCursor>;

export const encodeCursor = (cursor: IndexCursor | ScanCursor): string =>
  Buffer.from(JSON.stringify(cursor)).toString("base64url");

const notOurs = () => new InvalidStoreInput("cursor is not one this API returned for this query");

function decodeJson(cursor: string): unknown {
  if (cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw notOurs();
  try {
    return JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw notOurs();
  }
}

/** An index cursor for this queue and status, or InvalidStoreInput. */
export function decodeIndexCursor(
  cursor: string,
  queue: string,
  status: IndexedStatus,
  shards: number,
): IndexCursor {
  const parsed = IndexCursor.safeParse(decodeJson(cursor));
  if (!parsed.success) throw notOurs();
  const { key, shard } = parsed.data;
  // A shard past the layout's last (a large number never reaches the end by adding one).
  if (shard >= shards) throw notOurs();
  // DynamoDB refuses a start key outside the queried partition: another queue's, status' or shard's.
  if (key && key.gsi1pk !== indexPartition(queue, status, shard)) throw notOurs();
  return parsed.data;
}

/** A scan cursor, or InvalidStoreInput. */
export function decodeScanCursor(cursor: string): ScanCursor {
  const parsed = ScanCursor.safeParse(decodeJson(cursor));
  if (!parsed.success) throw notOurs();
  return parsed.data;
}

/**
 * An event's continuation (POST /events): the waiter its listing resumes after, and its pair's
 * partition as a digest (a pair's partition may be longer than a cursor, and is the caller's own).
 */
const WaiterCursor = z.object({ pair: z.string(), after: sortKey }).strict();

const pairDigest = (partition: string) => createHash("sha256").update(partition).digest("base64url");

export const encodeWaiterCursor = (partition: string, after: string): string =>
  Buffer.from(JSON.stringify({ pair: pairDigest(partition), after })).toString("base64url");

/**
 * The key an event's waiters listing resumes after, or InvalidStoreInput for a continuation that is
 * not one given for this pair (DynamoDB refuses a start key outside the queried partition).
 */
export function decodeWaiterCursor(cursor: string, partition: string): { pk: string; sk: string } {
  const parsed = WaiterCursor.safeParse(decodeJson(cursor));
  if (!parsed.success || parsed.data.pair !== pairDigest(partition)) throw notOurs();
  return { pk: partition, sk: parsed.data.after };
}
