import { ulid } from "ulid";
import { describe, expect } from "vitest";
import { tableLayout } from "../../lib/declarations/scale.ts";
import { StoreError } from "../../lib/errors.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import { putJob } from "../../lib/store/enqueue-ops.ts";
import type { JobItem } from "../../lib/store/job-item.ts";
import { indexKeys } from "../../lib/store/keys.ts";
import { type ClaimResult, claim } from "../../lib/store/lease-ops.ts";
import { listJobs } from "../../lib/store/read-ops.ts";
import { ManualClock } from "./clock.ts";
import { clientOn, dynamoBackends, freshTable } from "./dynamo-backends.ts";
import { queuedItem, seedOf } from "./jobs.ts";

/**
 * What the store conformance files share: their fixtures, and `onEveryBackend`, which runs a
 * file's operation family against real AWS SDK v3 clients on both DynamoDB emulators — dynalite
 * (in-process) and Amazon's DynamoDB Local (Java child process). Each test gets its own table. Time
 * is a ManualClock: leases expire by advancing it, never by sleeping.
 */

/** The default layout's status-index shards (an app that declares no rate). */
export const SHARDS = tableLayout(undefined).indexShards;

export const LEASE_MS = 30_000;
export const QUEUE = "default";
/** A redrive's hold against promotion, far enough out that no test here crosses it. */
export const HOLD = Date.parse("2030-01-01T00:00:00Z");
export const TTL = Math.floor(Date.parse("2026-02-01T00:00:00Z") / 1000);

/** One ConsumedCapacity report, recorded by a client middleware (the store itself doesn't expose it). */
export interface CapacityRecord {
  command: string;
  table: string | undefined;
  units: number | undefined;
}

export function jobItem(clock: ManualClock, overrides: Partial<JobItem> = {}): JobItem {
  return queuedItem(clock, { queue: QUEUE, payload: JSON.stringify({ hello: "world" }), ...overrides });
}

export function scheduledItem(clock: ManualClock, runAt: number, overrides: Partial<JobItem> = {}): JobItem {
  const id = overrides.id ?? ulid();
  const queue = overrides.queue ?? QUEUE;
  return jobItem(clock, {
    id,
    queue,
    status: "scheduled",
    runAt,
    ...indexKeys(queue, "scheduled", id, runAt, SHARDS),
    ...overrides,
  });
}

export function claimed(r: ClaimResult): JobItem {
  if (!r.claimed) throw new Error(`expected a claim, got current=${JSON.stringify(r.current)}`);
  return r.item;
}

/** A JSON payload of exactly `bytes` UTF-8 bytes. */
export function payloadOfBytes(bytes: number): string {
  const base = JSON.stringify({ data: "" });
  const json = JSON.stringify({ data: "x".repeat(bytes - base.length) });
  expect(Buffer.byteLength(json)).toBe(bytes);
  return json;
}

/**
 * DynamoDB's item size, roughly: attribute names plus values (strings as UTF-8 bytes, numbers about
 * one byte per two digits plus one, booleans one byte). Deliberately errs on the high side.
 */
export function approximateItemBytes(item: Record<string, unknown>): number {
  let total = 0;
  for (const [name, value] of Object.entries(item)) {
    total += Buffer.byteLength(name);
    if (typeof value === "string") total += Buffer.byteLength(value);
    else if (typeof value === "number")
      total += Math.ceil(String(Math.abs(value)).replace(/[.-]/g, "").length / 2) + 1;
    else if (typeof value === "boolean") total += 1;
    else total += Buffer.byteLength(JSON.stringify(value));
  }
  return total;
}

/** The store error an operation reports (the API maps these to codes; the store never does). */
export async function storeErrorOf(p: Promise<unknown>): Promise<StoreError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof StoreError) return err;
    throw err;
  }
  throw new Error("expected a StoreError");
}

/** What a family's tests reach on the backend they run on. */
export interface ConformanceBackend {
  /** Every request's ConsumedCapacity so far, in order (for counting requests and units). */
  capacity: CapacityRecord[];
  /** A fresh table, clock and store for one test. */
  setup(): Promise<{ table: string; clock: ManualClock; store: StoreContext }>;
  /** A queued, due job that `token` has claimed. */
  runningJob(
    store: StoreContext,
    clock: ManualClock,
    token?: string,
    overrides?: Partial<JobItem>,
  ): Promise<{ item: JobItem; running: JobItem }>;
  /** Every page of a listing, `limit` items a page, following the cursor to its end. */
  listAll(
    store: StoreContext,
    filter: { queue?: string; status?: JobItem["status"] },
    limit: number,
  ): Promise<JobItem[][]>;
}

/** Declares `family`'s tests once per DynamoDB emulator, each emulator started for the file. */
export function onEveryBackend(family: (backend: ConformanceBackend) => void): void {
  describe.each(dynamoBackends)("store conformance on $name", (factory) => {
    const capacity: CapacityRecord[] = [];
    const client = clientOn(factory, (c) =>
      c.middlewareStack.add(
        (next, context) => async (args) => {
          const out = await next(args);
          const input = args.input as { TableName?: string };
          const output = out.output as { ConsumedCapacity?: { CapacityUnits?: number } };
          capacity.push({
            command: context.commandName ?? "?",
            table: input.TableName,
            units: output.ConsumedCapacity?.CapacityUnits,
          });
          return out;
        },
        { step: "initialize", name: "recordConsumedCapacity" },
      ),
    );

    family({
      capacity,
      async setup() {
        const table = await freshTable(client());
        const clock = new ManualClock();
        const store = createStoreContext(client(), table, clock);
        return { table, clock, store };
      },
      async runningJob(store, clock, token = "t1", overrides = {}) {
        const item = jobItem(clock, overrides);
        expect(await putJob(store, item)).toEqual({ created: true });
        const running = claimed(await claim(store, seedOf(item), token, LEASE_MS));
        return { item, running };
      },
      async listAll(store, filter, limit) {
        const pages: JobItem[][] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 200; i++) {
          const page = await listJobs(store, { ...filter, limit, ...(cursor ? { cursor } : {}) });
          expect(page.items.length).toBeLessThanOrEqual(limit);
          pages.push(page.items);
          cursor = page.cursor;
          if (!cursor) return pages;
        }
        throw new Error("listJobs never stopped returning a cursor");
      },
    });
  });
}
