import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { describe, expect, test } from "vitest";
import {
  admitToBacklog,
  freeCallPermit,
  holdCallPermit,
  leaveBacklog,
  takeCallPermit,
} from "../../lib/store/batch-key-ops.ts";
import { createStoreContext, type StoreContext } from "../../lib/store/context.ts";
import { batchBacklogKey, batchCallPermitKey } from "../../lib/store/keys.ts";
import { ManualClock } from "../support/clock.ts";
import { clientOn, dynamoBackends, freshTable } from "../support/dynamo-backends.ts";

/** The batch key items' conditional writes (docs/architecture.md §18), on both emulators. */
describe.each(dynamoBackends)("batch key items on $name", (factory) => {
  const client = clientOn(factory);

  const setUp = async (): Promise<{ store: StoreContext; clock: ManualClock }> => {
    const clock = new ManualClock();
    return { store: createStoreContext(client(), await freshTable(client(), "bkey"), clock), clock };
  };
  const read = async (store: StoreContext, key: Record<string, string>) =>
    (await store.doc.send(new GetCommand({ TableName: store.table, Key: key, ConsistentRead: true }))).Item;

  test("the backlog admits up to max, refuses the next, and never counts below zero", async () => {
    const { store } = await setUp();
    const admit = () => admitToBacklog(store, "k", "a", 2, 9_999_999_999);
    expect(await admit()).toBe(true);
    expect(await admit()).toBe(true);
    expect(await admit()).toBe(false);
    expect(await read(store, batchBacklogKey("k", "a"))).toMatchObject({ pending: 2 });
    await leaveBacklog(store, "k", "a", 1);
    expect(await admit()).toBe(true);
    // More ended than were counted (a place lost): the count stops at zero.
    await leaveBacklog(store, "k", "a", 5);
    expect(await read(store, batchBacklogKey("k", "a"))).toMatchObject({ pending: 0 });
    // A key never admitted: nothing to take out, nothing goes below zero.
    await leaveBacklog(store, "k", "never", 1);
    expect((await read(store, batchBacklogKey("k", "never")))?.pending ?? 0).toBe(0);
  });

  test("a call permit is one call's until its hold runs out; only its holder extends or frees it", async () => {
    const { store, clock } = await setUp();
    const until = clock.now() + 30_000;
    expect(await takeCallPermit(store, "k", "a", 0, "one", until)).toBe(true);
    expect(await takeCallPermit(store, "k", "a", 0, "two", until)).toBe(false);
    expect(await holdCallPermit(store, "k", "a", 0, "two", until + 1)).toBe(false);
    expect(await holdCallPermit(store, "k", "a", 0, "one", until + 30_000)).toBe(true);
    clock.advance(45_000);
    // Still held: the holder extended it.
    expect(await takeCallPermit(store, "k", "a", 0, "two", clock.now() + 30_000)).toBe(false);
    clock.advance(20_000);
    // Run out: a dead holder's permit is taken over, and the old holder can no longer free it.
    expect(await takeCallPermit(store, "k", "a", 0, "two", clock.now() + 30_000)).toBe(true);
    await freeCallPermit(store, "k", "a", 0, "one");
    expect(await read(store, batchCallPermitKey("k", "a", 0))).toMatchObject({ token: "two" });
    await freeCallPermit(store, "k", "a", 0, "two");
    expect(await read(store, batchCallPermitKey("k", "a", 0))).toBeUndefined();
  });
});
