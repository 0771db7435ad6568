import { ProvisionedThroughputExceededException } from "@aws-sdk/client-dynamodb";
import {
  DynamoDBDocumentClient,
  GetCommand,
  UpdateCommand,
  type UpdateCommandInput,
} from "@aws-sdk/lib-dynamodb";
import { mockClient } from "aws-sdk-client-mock";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { RateLimiter } from "../../lib/rate-limit/rate-limiter.ts";
import { createStoreContext } from "../../lib/store/context.ts";
import { rateLimitKey } from "../../lib/store/keys.ts";
import { ManualClock } from "../support/clock.ts";
import { conditionalFailure, newDynamoClient } from "./aws-mocks.ts";

const ddb = mockClient(DynamoDBDocumentClient);
// The mocks patch the SDK classes themselves: put them back for the files that share this worker.
afterAll(() => {
  ddb.restore();
});
const bucket = rateLimitKey("partner-api");

let clock: ManualClock;
let limiter: RateLimiter;

beforeEach(() => {
  ddb.reset();
  clock = new ManualClock();
  limiter = new RateLimiter({
    store: createStoreContext(newDynamoClient(), "jobs", clock),
    scopes: app.rateLimits,
  });
});

const updates = () => ddb.commandCalls(UpdateCommand).map((c) => c.args[0].input as UpdateCommandInput);

describe("RateLimiter (mocked DynamoDB)", () => {
  it("a throughput error is not a denial: it propagates", async () => {
    ddb
      .on(UpdateCommand)
      .rejects(new ProvisionedThroughputExceededException({ message: "slow down", $metadata: {} }));
    await expect(limiter.acquire("partner-api")).rejects.toBeInstanceOf(
      ProvisionedThroughputExceededException,
    );
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it("a first grant tries the idle form: set tat from now, if absent or in the past", async () => {
    ddb.on(UpdateCommand).resolves({ Attributes: { ...bucket, tat: clock.now() + 500 } });
    expect(await limiter.acquire("partner-api")).toEqual({ granted: true });
    const [input] = updates();
    expect(input?.Key).toEqual(bucket);
    // The bucket's format version is written with it, once (lib/store/stored-formats.ts).
    expect(input?.UpdateExpression).toBe("SET #tat = :v0, #fv = if_not_exists(#fv, :v1)");
    expect(input?.ConditionExpression).toBe("(attribute_not_exists(#tat)) OR (#tat < :v2)");
    expect(input?.ExpressionAttributeValues).toEqual({
      ":v0": clock.now() + 500,
      ":v1": 1,
      ":v2": clock.now(),
    });
  });

  it("a lost condition that returns the item decides from it: one request, then the cache answers", async () => {
    const tat = clock.now() + 2_600; // the bucket is 100 ms past empty
    ddb.on(UpdateCommand).rejects(conditionalFailure({ ...bucket, tat }));
    expect(await limiter.acquire("partner-api")).toEqual({ granted: false, waitMs: 600 });
    expect(await limiter.acquire("partner-api")).toEqual({ granted: false, waitMs: 600 });
    expect(updates()).toHaveLength(1);
    expect(ddb.commandCalls(GetCommand)).toHaveLength(0);
  });

  it("after a lost race on the idle form, retries the busy form: add to tat while within the limit", async () => {
    const now = clock.now();
    ddb
      .on(UpdateCommand)
      .rejectsOnce(conditionalFailure({ ...bucket, tat: now + 500 }))
      .resolves({ Attributes: { ...bucket, tat: now + 1_000 } });
    expect(await limiter.acquire("partner-api")).toEqual({ granted: true });
    const busy = updates()[1];
    expect(busy?.UpdateExpression).toBe("SET #tat = if_not_exists(#tat, :v0) + :v1");
    expect(busy?.ConditionExpression).toBe("(#tat >= :v2) AND (#tat <= :v3)");
    expect(busy?.ExpressionAttributeValues).toMatchObject({ ":v1": 500, ":v2": now, ":v3": now + 2_000.01 });
  });

  it("endless contention is bounded: after a few attempts, a short wait", async () => {
    const now = clock.now();
    // Every write sees the bucket just flipped to the other side of now.
    ddb.on(UpdateCommand).callsFake((input: UpdateCommandInput) => {
      const busy = input.UpdateExpression?.includes("if_not_exists(#tat");
      throw conditionalFailure({ ...bucket, tat: busy ? now - 1 : now });
    });
    const answer = await limiter.acquire("partner-api");
    expect(answer.granted).toBe(false);
    expect(answer.granted === false && answer.waitMs).toBeGreaterThan(0);
    expect(updates()).toHaveLength(5);
  });

  it("remembers the last 10 000 buckets: a key used long ago costs one request again, a recent one none", async () => {
    // Every grant leaves its bucket busy far into the future, so a remembered one is denied locally.
    ddb.on(UpdateCommand).resolves({ Attributes: { tat: clock.now() + 3_600_000 } });
    expect(await limiter.acquire("partner-api", { key: "first" })).toEqual({ granted: true });
    expect((await limiter.acquire("partner-api", { key: "first" })).granted).toBe(false);
    expect(updates()).toHaveLength(1);
    for (let i = 0; i < 10_000; i++) await limiter.acquire("partner-api", { key: `tenant-${i}` });
    expect(updates()).toHaveLength(10_001);
    // The newest is still known (no request); the first was forgotten (one request to learn it).
    expect((await limiter.acquire("partner-api", { key: "tenant-9999" })).granted).toBe(false);
    expect(updates()).toHaveLength(10_001);
    await limiter.acquire("partner-api", { key: "first" });
    expect(updates()).toHaveLength(10_002);
    expect(updates().at(-1)?.Key).toEqual(rateLimitKey("partner-api", "first"));
  });

  it("rejects a bad scope declaration at construction", () => {
    const store = createStoreContext(newDynamoClient(), "jobs", clock);
    const scopes = [{ scope: "Bad Name", capacity: 1, refillPerSecond: 1 }];
    expect(() => new RateLimiter({ store, scopes })).toThrow(/name must match/);
  });
});
