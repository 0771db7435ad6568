import { QueryCommand } from "@aws-sdk/lib-dynamodb";
import { attributeExists, inStatusShard } from "./conditions.ts";
import type { StoreContext } from "./context.ts";
import { Expr } from "./expression.ts";
import { statusIndex } from "./table.ts";

/** One kind's suspended jobs under one version (absent: journals started before versions were recorded). */
export interface WaitingCount {
  queue: string;
  kind: string;
  version?: string;
  jobs: number;
}

/** Queries one call makes at most: a count is an operator's look before a deploy, not a hot path. */
export const WAITING_COUNT_QUERIES = 40;

/**
 * countWaiting — the suspended durable jobs (scheduled, with a `waiting`) of each queue, per kind
 * and version (docs/guide/durable-jobs.md, "Versions"): what a deploy's new versions will meet.
 * input: the queues to count. Reads each queue's scheduled partitions of the status index, only
 * the fields counted, at most WAITING_COUNT_QUERIES queries in all.
 * result: the counts, largest first; `complete` false when the bound cut the count short (the
 * counts are then at least these).
 */
export async function countWaiting(
  ctx: StoreContext,
  queues: readonly string[],
): Promise<{ counts: WaitingCount[]; complete: boolean }> {
  const tally = new Map<string, WaitingCount>();
  let queries = 0;
  for (const queue of queues) {
    for (let shard = 0; shard < ctx.layout.indexShards; shard++) {
      let startKey: Record<string, unknown> | undefined;
      do {
        if (queries >= WAITING_COUNT_QUERIES) return { counts: sorted(tally), complete: false };
        queries++;
        const e = new Expr();
        const key = inStatusShard(queue, "scheduled", shard)(e);
        const filter = attributeExists("waiting")(e);
        const projection = [e.name("kind"), e.name("version")].join(", ");
        const out = await ctx.doc.send(
          new QueryCommand({
            TableName: ctx.table,
            IndexName: statusIndex.name,
            KeyConditionExpression: key,
            FilterExpression: filter,
            ProjectionExpression: projection,
            ...e.params(),
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
            ReturnConsumedCapacity: "TOTAL",
          }),
        );
        for (const item of (out.Items ?? []) as { kind: string; version?: string }[]) {
          const id = JSON.stringify([queue, item.kind, item.version ?? null]);
          const count = tally.get(id) ?? {
            queue,
            kind: item.kind,
            ...(item.version !== undefined ? { version: item.version } : {}),
            jobs: 0,
          };
          count.jobs += 1;
          tally.set(id, count);
        }
        startKey = out.LastEvaluatedKey;
      } while (startKey);
    }
  }
  return { counts: sorted(tally), complete: true };
}

const sorted = (tally: Map<string, WaitingCount>) =>
  [...tally.values()].sort(
    (a, b) =>
      b.jobs - a.jobs || a.kind.localeCompare(b.kind) || (a.version ?? "").localeCompare(b.version ?? ""),
  );
