import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AttributeValue, BatchWriteItemCommand, type DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import type { StoredFormat } from "../../lib/store/stored-formats.ts";
import { ROOT } from "./source-files.ts";

/**
 * A set of stored-format fixtures (test/fixtures/stored-formats/<set>/), as
 * scripts/capture-stored-formats.ts wrote them from a real run: the table's items by format
 * (DynamoDB JSON), the message bodies the stack sent, the claims bucket's objects, and a manifest
 * naming the jobs each check uses.
 */
export interface FormatFixtures {
  items: Map<StoredFormat, Record<string, AttributeValue>[]>;
  messages: { queue: string; delaySeconds?: number; body: string }[];
  claims: { key: string; metadata: Record<string, string>; body: string }[];
  manifest: FixtureManifest;
}

export interface FixtureManifest {
  capturedAt: number;
  versions: Record<string, number>;
  jobs: Record<string, string>;
  event: { job: string; event: string; match: string };
  token: { job: string; id: string; url: string };
  /** From v2: order-saga waiting for its race (order.shipped against a timer). */
  race?: { job: string; event: string; match: string };
  flowKey: { kind: string; key: string; holders: string[] };
  group: { id: string; completion: string };
}

export const FIXTURES_DIR = join(ROOT, "test", "fixtures", "stored-formats");

/** The sets kept, oldest first (v1, v2, …). */
export function fixtureSets(): string[] {
  return readdirSync(FIXTURES_DIR)
    .filter((name) => /^v\d+$/.test(name))
    .sort((a, b) => Number(a.slice(1)) - Number(b.slice(1)));
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

export function loadFixtures(set: string): FormatFixtures {
  const dir = join(FIXTURES_DIR, set);
  const items = new Map<StoredFormat, Record<string, AttributeValue>[]>();
  for (const file of readdirSync(join(dir, "items"))
    .filter((f) => f.endsWith(".json"))
    .sort())
    items.set(file.slice(0, -".json".length) as StoredFormat, readJson(join(dir, "items", file)));
  return {
    items,
    messages: readJson(join(dir, "messages.json")),
    claims: readJson(join(dir, "claims.json")),
    manifest: readJson(join(dir, "manifest.json")),
  };
}

/** Writes every fixture item into `table` (25 a request) and every claims object into `bucket`. */
export async function loadIntoStack(
  fixtures: FormatFixtures,
  clients: { dynamodb: DynamoDBClient; s3: S3Client },
  table: string,
  bucket: string,
): Promise<void> {
  const all = [...fixtures.items.values()].flat();
  for (let i = 0; i < all.length; i += 25) {
    let requests = { [table]: all.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) };
    for (let round = 0; Object.keys(requests).length > 0; round++) {
      if (round === 5) throw new Error("the table kept fixture items unprocessed");
      const out = await clients.dynamodb.send(new BatchWriteItemCommand({ RequestItems: requests }));
      requests = (out.UnprocessedItems ?? {}) as typeof requests;
    }
  }
  for (const object of fixtures.claims)
    await clients.s3.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: object.key,
        Body: object.body,
        ContentType: "application/json",
        Metadata: object.metadata,
      }),
    );
}
