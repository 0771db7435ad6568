import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { type AttributeValue, ScanCommand } from "@aws-sdk/client-dynamodb";
import { GetObjectCommand, ListObjectsV2Command } from "@aws-sdk/client-s3";
import type { StoredFormat } from "../lib/store/stored-formats.ts";
import { CLAIMS_BUCKET } from "../local/emulators.ts";
import type { LocalStack } from "../local/stack.ts";

/**
 * What scripts/capture-stored-formats.ts reads from a running stack (its table and claims bucket)
 * and the files it writes a set of fixtures as (test/support/stored-format-fixtures.ts reads them).
 */

export type TableItem = Record<string, AttributeValue>;

/** Every item of the stack's table, as DynamoDB JSON. */
export async function scanTable(stack: LocalStack): Promise<TableItem[]> {
  const items: TableItem[] = [];
  let start: TableItem | undefined;
  do {
    const out = await stack.clients.dynamodb.send(
      new ScanCommand({ TableName: "skyforge-jobs", ...(start ? { ExclusiveStartKey: start } : {}) }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every object of the claims bucket: its key, its user metadata and its body. */
export async function claimObjects(stack: LocalStack) {
  const listed = await stack.clients.s3.send(new ListObjectsV2Command({ Bucket: CLAIMS_BUCKET }));
  const objects = [];
  for (const { Key } of listed.Contents ?? []) {
    const out = await stack.clients.s3.send(new GetObjectCommand({ Bucket: CLAIMS_BUCKET, Key }));
    objects.push({ key: Key, metadata: out.Metadata ?? {}, body: await out.Body?.transformToString("utf8") });
  }
  return objects.sort((a, b) => String(a.key).localeCompare(String(b.key)));
}

/** The formats whose items a key prefix names alone (lib/store/keys.ts); formatOf sorts the rest. */
const KEY_FORMATS: Readonly<Record<string, StoredFormat>> = {
  "uniq#": "uniqueLock",
  "queue#": "queueState",
  "lease#": "leaderLease",
  "rate#": "rateBucket",
  "gslice#": "groupSlice",
  "tok#": "token",
  "evt#": "eventWaiter",
  "evb#": "bufferedEvent",
  "fkey#": "flowKey",
  "coal#": "coalesceLock",
  "tag#": "tagEntry",
};

/** Which stored format a table item is in, by its key; an item of none is an error (name its format). */
export function formatOf(item: TableItem): StoredFormat {
  const pk = item.pk?.S ?? "";
  const sk = item.sk?.S ?? "";
  const prefix = pk.slice(0, pk.indexOf("#") + 1);
  const bySortKey: Readonly<Record<string, StoredFormat | undefined>> = {
    "job#": sk === "job" ? "job" : sk === "payload" ? "payload" : undefined,
    "group#": sk === "group" ? "group" : "groupSlice",
    "bkey#": sk === "backlog" ? "batchBacklog" : "batchCallPermit",
  };
  const format =
    pk === "schedules"
      ? "schedule"
      : pk === "cursor#flow-heal"
        ? "flowHealCursor"
        : prefix in bySortKey
          ? bySortKey[prefix]
          : KEY_FORMATS[prefix];
  if (!format) throw new Error(`an item of no known format: ${pk} / ${sk}`);
  return format;
}

const byKey = (a: TableItem, b: TableItem) =>
  `${a.pk?.S}\u0000${a.sk?.S}`.localeCompare(`${b.pk?.S}\u0000${b.sk?.S}`);

const writeJson = (path: string, value: unknown) => writeFile(path, `${JSON.stringify(value, null, 2)}\n`);

/**
 * Writes a set into `dir` (emptied first): items/<format>.json (each sorted by key), messages.json,
 * claims.json and manifest.json. result: how many items of each format.
 */
export async function writeFixtureSet(
  dir: string,
  set: { items: TableItem[]; messages: unknown[]; claims: unknown[]; manifest: unknown },
): Promise<Map<StoredFormat, number>> {
  const byFormat = new Map<StoredFormat, TableItem[]>();
  for (const item of set.items) {
    const format = formatOf(item);
    byFormat.set(format, [...(byFormat.get(format) ?? []), item]);
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, "items"), { recursive: true });
  for (const [format, list] of byFormat)
    await writeJson(join(dir, "items", `${format}.json`), list.sort(byKey));
  await writeJson(join(dir, "messages.json"), set.messages);
  await writeJson(join(dir, "claims.json"), set.claims);
  await writeJson(join(dir, "manifest.json"), set.manifest);
  return new Map([...byFormat].map(([format, list]) => [format, list.length]));
}
