import { describe, expect, test } from "vitest";
import { IndexEntries, indexEntryUnits, itemBytes, itemClassOf } from "../../bench/write-ledger.ts";

const group = (gsi1sk: string | undefined, extra: Record<string, { S: string }> = {}) => ({
  pk: { S: "group#g1" },
  sk: { S: "group" },
  status: { S: "sealed" },
  ...(gsi1sk ? { gsi1pk: { S: "~group#3" }, gsi1sk: { S: gsi1sk } } : {}),
  ...extra,
});

describe("itemClassOf", () => {
  test("names the item a write lands on by its key", () => {
    expect(itemClassOf("job#01J", "job")).toBe("job");
    expect(itemClassOf("job#01J", "payload")).toBe("payload");
    expect(itemClassOf("group#g1", "group")).toBe("group");
    expect(itemClassOf("group#g1", "slice#0000003")).toBe("slice");
    expect(itemClassOf("queue#default", "state")).toBe("queue");
    expect(itemClassOf("schedules", "schedule#nightly")).toBe("schedules");
  });
});

describe("itemBytes", () => {
  test("attribute names plus values, as DynamoDB sizes them", () => {
    expect(itemBytes({ pk: { S: "abc" } })).toBe(2 + 3);
    expect(itemBytes({ n: { N: "12345" } })).toBe(1 + 4); // ceil(5 digits / 2) + 1
    expect(itemBytes({ s: { NS: ["1", "22"] } })).toBe(1 + 2 + 2);
    expect(itemBytes({ m: { M: { a: { S: "xy" } } } })).toBe(1 + 3 + 1 + 2);
    expect(itemBytes({ ok: { BOOL: true } })).toBe(2 + 1);
  });

  test("an index entry is 1 WCU per started KB, ~100 bytes of overhead included", () => {
    expect(indexEntryUnits({ a: { S: "x".repeat(900) } })).toBe(1);
    expect(indexEntryUnits({ a: { S: "x".repeat(1000) } })).toBe(2);
  });
});

describe("IndexEntries", () => {
  test("a group item's life in the index: in, moved, rewritten, out", () => {
    const index = new IndexEntries();
    expect(index.afterWrite("g1", group("000001#g1"))).toBe(1); // put: the entry is written
    expect(index.afterWrite("g1", group("000002#g1"))).toBe(2); // the sort key moved: delete + put
    expect(index.afterWrite("g1", group("000002#g1", { x: { S: "y" } }))).toBe(1); // same key: rewritten
    expect(index.afterWrite("g1", group(undefined))).toBe(1); // left the index: the entry is deleted
    expect(index.afterWrite("g1", group(undefined))).toBe(0); // outside it, a write costs the index nothing
  });

  test("items never indexed cost nothing; a deleted indexed item deletes its entry", () => {
    const index = new IndexEntries();
    expect(index.afterWrite("j1", { pk: { S: "job#j1" }, sk: { S: "job" } })).toBe(0);
    expect(index.afterWrite("j1", undefined)).toBe(0);
    index.afterWrite("g2", group("000001#g2"));
    expect(index.afterWrite("g2", undefined)).toBe(1);
  });

  test("a large entry costs its size in each write", () => {
    const index = new IndexEntries();
    const big = (sk: string) => group(sk, { pad: { S: "x".repeat(1500) } });
    expect(index.afterWrite("g3", big("000001#g3"))).toBe(2);
    expect(index.afterWrite("g3", big("000002#g3"))).toBe(4);
  });
});
