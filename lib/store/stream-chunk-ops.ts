import { ConditionalCheckFailedException } from "@aws-sdk/client-dynamodb";
import { PutCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { StoreTransitions } from "../job/status.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";

/**
 * A job's stream chunks (docs/architecture.md §25), kept so a subscriber that missed some reads them
 * back. One item each, in the job's own stream partition, sorted by sequence number then stream name:
 * a replay from `n` is one Query of what sorts after `n`. TTL (`expiresAt`) removes them.
 */
export interface StoredChunk {
  stream: string;
  seq: number;
  /** The chunk's JSON; absent on a close. */
  chunk?: string;
  closed?: true;
  at: number;
}

const SEQ_DIGITS = 10;
const streamPartition = (jobId: string) => `stream#${jobId}`;
const chunkSort = (seq: number, stream: string) => `chunk#${String(seq).padStart(SEQ_DIGITS, "0")}#${stream}`;

/**
 * putStreamChunk — a handler wrote a chunk (or closed a stream) at its place in the stream.
 * input: the job id, the chunk, the TTL (epoch s).
 * condition: no chunk at this (stream, seq) yet: a durable job's replay writing the same places again
 * writes nothing. result: true when this call wrote it, false when the place was taken.
 */
export async function putStreamChunk(
  ctx: StoreContext,
  jobId: string,
  chunk: StoredChunk,
  expiresAt: number,
): Promise<boolean> {
  try {
    await ctx.doc.send(
      new PutCommand({
        TableName: ctx.table,
        Item: {
          pk: streamPartition(jobId),
          sk: chunkSort(chunk.seq, chunk.stream),
          stream: chunk.stream,
          seq: chunk.seq,
          at: chunk.at,
          ...(chunk.chunk !== undefined ? { chunk: chunk.chunk } : {}),
          ...(chunk.closed ? { closed: true } : {}),
          expiresAt,
        },
        ConditionExpression: "attribute_not_exists(pk)",
        ReturnConsumedCapacity: "TOTAL",
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

export const putStreamChunkTransitions = [] as const satisfies StoreTransitions;

/**
 * listStreamChunks — the job's chunks with a sequence number above `from`, by sequence number, at
 * most `limit`, strongly consistent; `after`: the last sort key of the previous page.
 */
export async function listStreamChunks(
  ctx: StoreContext,
  jobId: string,
  from: number,
  limit: number,
  after?: string,
): Promise<{ chunks: StoredChunk[]; next?: string }> {
  const e = new Expr();
  const start = after ?? chunkSort(from + 1, "");
  const out = await ctx.doc.send(
    new QueryCommand({
      TableName: ctx.table,
      KeyConditionExpression: `${e.name("pk")} = ${e.value(streamPartition(jobId))} AND ${e.name("sk")} ${after ? ">" : ">="} ${e.value(start)}`,
      ...e.params(),
      ConsistentRead: true,
      Limit: limit,
      ReturnConsumedCapacity: "TOTAL",
    }),
  );
  const items = out.Items ?? [];
  const chunks = items.map((item) => ({
    stream: String(item.stream),
    seq: Number(item.seq),
    at: Number(item.at),
    ...(typeof item.chunk === "string" ? { chunk: item.chunk } : {}),
    ...(item.closed ? { closed: true as const } : {}),
  }));
  const last = items.at(-1);
  return { chunks, ...(out.LastEvaluatedKey && last ? { next: String(last.sk) } : {}) };
}
