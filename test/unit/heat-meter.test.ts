import { describe, expect, it } from "vitest";
import { HeatMeter } from "../../bench/heat-meter.ts";
import { projectHeat } from "../../bench/heat-projection.ts";
import { flowKey, flowRateBucket } from "../../lib/job/flow-key.ts";
import * as keys from "../../lib/store/keys.ts";

type Middleware = (
  next: (args: { input: object; request: unknown }) => Promise<{ output: object; response: unknown }>,
  context: { commandName?: string },
) => (args: { input: object; request: unknown }) => Promise<{ output: object; response: unknown }>;

/**
 * The meter's middleware, driven by hand: each call is one request as the SDK hands it over (the
 * document client's input already marshalled), answered with the capacity DynamoDB reports.
 */
function metered() {
  const meter = new HeatMeter();
  let middleware: Middleware | undefined;
  meter.attach({
    middlewareStack: {
      add: (m: Middleware) => {
        middleware = m;
      },
    },
  });
  const send = async (command: string, input: object, capacity?: number, fail?: string) => {
    const next = async () => {
      if (fail) throw Object.assign(new Error(fail), { name: fail });
      return {
        output: capacity === undefined ? {} : { ConsumedCapacity: { CapacityUnits: capacity } },
        response: {},
      };
    };
    await middleware?.(next, { commandName: `${command}Command` })({ input, request: {} }).catch(
      () => undefined,
    );
  };
  const heat = (key: string) => meter.snapshot().find((h) => h.key === key);
  return { meter, send, heat };
}

const S = (s: string) => ({ S: s });
const names = { "#gsi1pk": "gsi1pk", "#status": "status" };

describe("the heat meter", () => {
  it("charges an item's writes to its partition, and the index partition it enters, is updated in and leaves", async () => {
    const { send, heat } = metered();
    // Enters the index with its put.
    await send("PutItem", { Item: { pk: S("job#a"), sk: S("job"), gsi1pk: S("default#scheduled#3") } }, 1);
    // Updated while in it (the promotion's hold): the index entry is rewritten too.
    await send(
      "UpdateItem",
      {
        Key: { pk: S("job#a"), sk: S("job") },
        UpdateExpression: "SET #status = :v0",
        ExpressionAttributeNames: names,
      },
      1,
    );
    // Leaves it.
    await send(
      "UpdateItem",
      {
        Key: { pk: S("job#a"), sk: S("job") },
        UpdateExpression: "SET #status = :v0 REMOVE #gsi1pk, #gsi1sk",
        ExpressionAttributeNames: { ...names, "#gsi1sk": "gsi1sk" },
      },
      1,
    );
    // Out of the index: a later write touches the table alone.
    await send(
      "UpdateItem",
      { Key: { pk: S("job#a"), sk: S("job") }, UpdateExpression: "SET #status = :v0" },
      2,
    );
    expect(heat("job#a")).toMatchObject({ pattern: "job item", writeUnits: 5, onIndex: false });
    expect(heat("default#scheduled#3")).toMatchObject({
      pattern: "status index shard",
      writeUnits: 3,
      onIndex: true,
    });
  });

  it("moves an entry between index partitions; a lost condition costs a unit and moves nothing", async () => {
    const { send, heat } = metered();
    await send("PutItem", { Item: { pk: S("job#b"), sk: S("job"), gsi1pk: S("default#scheduled#1") } }, 1);
    await send(
      "UpdateItem",
      {
        Key: { pk: S("job#b"), sk: S("job") },
        UpdateExpression: "SET #gsi1pk = :v3, #status = :v1",
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: { ":v3": S("default#dead#1"), ":v1": S("dead") },
      },
      1,
    );
    await send(
      "UpdateItem",
      { Key: { pk: S("job#b"), sk: S("job") }, UpdateExpression: "SET #status = :v0" },
      undefined,
      "ConditionalCheckFailedException",
    );
    expect(heat("default#scheduled#1")?.writeUnits).toBe(2); // entered, then left
    expect(heat("default#dead#1")?.writeUnits).toBe(1);
    expect(heat("job#b")?.writeUnits).toBe(3);
  });

  it("charges reads to the partition a Get or a Query reads, the index's for an index Query", async () => {
    const { send, heat } = metered();
    await send("GetItem", { Key: { pk: S("queue#default"), sk: S("state") } }, 0.5);
    await send(
      "Query",
      {
        IndexName: "byStatus",
        KeyConditionExpression: "#gsi1pk = :v0 AND #gsi1sk < :v1",
        ExpressionAttributeNames: { "#gsi1pk": "gsi1pk", "#gsi1sk": "gsi1sk" },
        ExpressionAttributeValues: { ":v0": S("~group#2"), ":v1": S("x") },
      },
      1.5,
    );
    expect(heat("queue#default")).toMatchObject({ pattern: "queue state", readUnits: 0.5 });
    expect(heat("~group#2")).toMatchObject({ pattern: "group index shard", readUnits: 1.5, onIndex: true });
  });

  it("projects each pattern's hottest key to the target and marks one over a partition's limit", () => {
    const entries = projectHeat(
      [
        { pattern: "rate-limit bucket", key: "rate#p", onIndex: false, writeUnits: 110, readUnits: 10 },
        { pattern: "job item", key: "job#x", onIndex: false, writeUnits: 3, readUnits: 0 },
        { pattern: "job item", key: "job#y", onIndex: false, writeUnits: 4, readUnits: 0 },
      ],
      100,
      10_000,
    );
    expect(entries).toEqual([
      {
        pattern: "rate-limit bucket",
        key: "rate#p",
        writesPerJob: 1.1,
        readsPerJob: 0.1,
        projectedWritesPerSecond: 11_000,
        projectedReadsPerSecond: 1000,
        overLimit: true,
      },
      {
        pattern: "job item",
        key: "job#y",
        writesPerJob: 0.04,
        readsPerJob: 0,
        projectedWritesPerSecond: 400,
        projectedReadsPerSecond: 0,
        overLimit: false,
      },
    ]);
    expect(() => projectHeat([], 0, 10_000)).toThrow(/jobs must be above 0/);
  });
});

describe("the access pattern of every partition key the store builds", () => {
  const tenant = flowKey("tenant-report", "acme");
  const llm = flowKey("tenant-report", "llm", "llm");
  const llmBucket = flowRateBucket(llm);
  // Each key builder of lib/store/keys.ts: the partition it writes, on the table or the index.
  const built: Record<string, [partition: string, onIndex: boolean, pattern: string][]> = {
    jobKey: [[keys.jobKey("01J").pk, false, "job item"]],
    payloadKey: [[keys.payloadKey("01J").pk, false, "job item"]],
    uniqueKeyLock: [[keys.uniqueKeyLock("default", "u").pk, false, "unique-key lock"]],
    queueStateKey: [[keys.queueStateKey("default").pk, false, "queue state"]],
    scheduleKey: [[keys.scheduleKey("nightly").pk, false, "schedules"]],
    leaseKey: [[keys.leaseKey("cron").pk, false, "leader lease"]],
    rateLimitKey: [
      [keys.rateLimitKey("partner-api").pk, false, "rate-limit bucket"],
      [keys.rateLimitKey("partner-api", "k").pk, false, "rate-limit bucket"],
      // A flow limit's rate: its own pattern, so a shared flow rate (`() => "llm"`) shows by name.
      [keys.rateLimitKey(llmBucket.scope, llmBucket.key).pk, false, "flow rate bucket"],
      [keys.rateLimitKey(flowRateBucket(tenant).scope, "acme").pk, false, "flow rate bucket"],
    ],
    groupKey: [[keys.groupKey("g").pk, false, "group item"]],
    sliceKey: [
      [keys.sliceKey("g", 3, 20).pk, false, "group slices"],
      [keys.sliceKey("g", 3, undefined).pk, false, "group item"],
    ],
    batchBacklogKey: [[keys.batchBacklogKey("b", "k").pk, false, "batch key"]],
    batchCallPermitKey: [[keys.batchCallPermitKey("b", "k", 1).pk, false, "batch key"]],
    coalesceLockKey: [[keys.coalesceLockKey("doc-index", "readme").pk, false, "coalesce lock"]],
    flowKeyStateKey: [
      [keys.flowKeyStateKey(tenant).pk, false, "flow key state"],
      [keys.flowKeyStateKey(llm).pk, false, "flow key state"],
    ],
    flowHealCursorKey: [[keys.flowHealCursorKey.pk, false, "reaper cursor"]],
    tokenKey: [[keys.tokenKey("t").pk, false, "wait token"]],
    eventWaiterKey: [[keys.eventWaiterKey("paid", "o#1", "01J").pk, false, "event waiters"]],
    bufferedEventKey: [[keys.bufferedEventKey("paid", "o#1", 1, "e").pk, false, "buffered events"]],
    indexKeys: [[keys.indexKeys("default", "scheduled", "01J", 1, 60).gsi1pk, true, "status index shard"]],
    groupIndexKeys: [[keys.groupIndexKeys("g", 1).gsi1pk, true, "group index shard"]],
    parkIndexKeys: [
      [keys.parkIndexKeys(tenant, { createdAt: 1, id: "01J" }).gsi1pk, true, "parked-job index shard"],
    ],
  };

  it("names each one, flow control's state, rate buckets and parked lines among them", () => {
    for (const [builder, cases] of Object.entries(built))
      for (const [partition, onIndex, pattern] of cases)
        expect(`${builder}: ${keys.partitionPattern(partition, onIndex)}`).toBe(`${builder}: ${pattern}`);
    expect(keys.partitionPattern("zzz#1", false)).toBe("unknown (zzz#)");
  });

  it("covers every key builder the file exports", () => {
    const builders = Object.keys(keys).filter((name) => /(Key|Lock|Keys)$/.test(name));
    expect(builders.sort()).toEqual(Object.keys(built).sort());
  });
});
