import { describe, expect, it } from "vitest";
import {
  decodeFlowKey,
  encodeFlowKey,
  flowKey,
  flowKeyFields,
  flowKeyOf,
  flowKeyPath,
  flowRateBucket,
} from "../../lib/job/flow-key.ts";
import { flowKeyPartition, parkPrefix } from "../../lib/job/key-layout.ts";
import {
  flowKeyStateKey,
  PARK_INDEX_SHARDS,
  parkIndexKeys,
  parkPartition,
  parkShard,
  rateLimitKey,
  shardOf,
} from "../../lib/store/keys.ts";
import type { JobMessage } from "../../lib/transport/job-message.ts";
import { fairGroup } from "../../lib/transport/outgoing-messages.ts";

// A flow key (docs/architecture.md §20) is one value with one text; every form it takes is built from it.
const keys = [
  flowKey("tenant-echo", "acme"),
  flowKey("tenant-echo", "a#b:c"),
  flowKey("t-solo", "dé jà/vu %20"),
  flowKey("t-solo", "#"),
  flowKey("tenant-report", "ann", "user"),
  flowKey("tenant-report", "a!b#c", "llm"),
];

describe("a flow key's one text", () => {
  it("is <kind>#<key>, and reads back as the same key whatever the key holds", () => {
    expect(encodeFlowKey(flowKey("tenant-echo", "acme"))).toBe("tenant-echo#acme");
    for (const fk of keys) expect(decodeFlowKey(encodeFlowKey(fk))).toEqual(fk);
  });

  it("a limit other than the kind's first is in it: <kind>!<limit>#<key>, and reads back with it", () => {
    expect(encodeFlowKey(flowKey("tenant-report", "ann", "user"))).toBe("tenant-report!user#ann");
    expect(decodeFlowKey("tenant-report!user#a!b#c")).toEqual(flowKey("tenant-report", "a!b#c", "user"));
    expect(flowKeyFields(flowKey("tenant-report", "ann", "user"))).toEqual({
      kind: "tenant-report",
      flowKey: "ann",
      flowLimit: "user",
    });
  });

  it("all of a kind's lines sort together in the parked index, before a kind whose name starts with its own", () => {
    const sorted = [
      parkPrefix(flowKey("a-b", "k")),
      parkPrefix(flowKey("a", "k")),
      parkPrefix(flowKey("a", "k", "user")),
    ].sort();
    expect(sorted).toEqual(["a!user#k#", "a#k#", "a-b#k#"]);
    // `<kind>#\uffff` steps past every line of the kind and none of the next kind's.
    expect(sorted.filter((p) => p < "a#\uffff")).toEqual(["a!user#k#", "a#k#"]);
  });

  it("a text without a kind is refused", () => {
    expect(() => decodeFlowKey("no-kind")).toThrow(/not a flow key's text/);
    expect(() => decodeFlowKey("#key")).toThrow(/not a flow key's text/);
  });

  it("a job's attributes, and a log line's fields, are its kind and its key as flowKey", () => {
    expect(flowKeyOf({ kind: "tenant-echo", flowKey: "acme" })).toEqual(flowKey("tenant-echo", "acme"));
    expect(flowKeyOf({ kind: "tenant-echo" })).toBeUndefined();
    expect(flowKeyFields(flowKey("tenant-echo", "acme"))).toEqual({ kind: "tenant-echo", flowKey: "acme" });
  });
});

describe("every form of a flow key is built from its text", () => {
  it("the state item's partition, as stored today: fkey#<kind>#<key>", () => {
    expect(flowKeyStateKey(flowKey("tenant-echo", "acme"))).toEqual({
      pk: "fkey#tenant-echo#acme",
      sk: "state",
    });
    for (const fk of keys) expect(flowKeyPartition(fk)).toBe(`fkey#${encodeFlowKey(fk)}`);
  });

  it("the parked line: its shard is the text's, its sort keys the text with the key URI-encoded", () => {
    const fk = flowKey("tenant-echo", "a#b");
    const { gsi1pk, gsi1sk } = parkIndexKeys(fk, {
      createdAt: 1_700_000_000_000,
      id: "01J0000000000000000000000A",
    });
    expect(gsi1pk).toBe(parkPartition(shardOf("tenant-echo#a#b", PARK_INDEX_SHARDS)));
    expect(gsi1sk).toBe("tenant-echo#a%23b#001700000000000#01J0000000000000000000000A");
    for (const k of keys) {
      expect(parkShard(k)).toBe(shardOf(encodeFlowKey(k), PARK_INDEX_SHARDS));
      expect(parkPrefix(k)).toBe(`${encodeFlowKey(flowKey(k.kind, encodeURIComponent(k.key), k.limit))}#`);
    }
  });

  it("the rate bucket, as stored today: rate#flow:<text>", () => {
    for (const fk of keys) {
      const { scope, key } = flowRateBucket(fk);
      expect(rateLimitKey(scope, key).pk).toBe(`rate#flow:${encodeFlowKey(fk)}`);
    }
  });

  it("the message's fair-queue group is the text (its SHA-256 when SQS can't take it)", () => {
    const message = (fk: { kind: string; key: string }) =>
      ({
        v: 1,
        id: "01J0000000000000000000000A",
        kind: fk.kind,
        queue: "default",
        flowKey: fk.key,
      }) as JobMessage;
    expect(fairGroup(message(flowKey("tenant-echo", "a#b:c")))).toEqual({
      MessageGroupId: "tenant-echo#a#b:c",
    });
    expect(fairGroup(message(flowKey("t-solo", "dé jà"))).MessageGroupId).toMatch(/^[0-9a-f]{64}$/);
    expect(fairGroup({ ...message(flowKey("t", "x")), flowKey: undefined } as JobMessage)).toEqual({});
  });

  it("the API path: /keys/{kind}/{key}, each part one segment", () => {
    expect(flowKeyPath(flowKey("tenant-echo", "a/b#c"))).toBe("/keys/tenant-echo/a%2Fb%23c");
    expect(flowKeyPath(flowKey("tenant-echo", "k"), (s) => `[${s}]`)).toBe("/keys/[tenant-echo]/[k]");
    expect(flowKeyPath(flowKey("tenant-report", "ann", "user"))).toBe("/keys/tenant-report/ann?limit=user");
  });
});
