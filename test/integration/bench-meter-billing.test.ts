import { PutItemCommand } from "@aws-sdk/client-dynamodb";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { RequestMeter } from "../../bench/request-meter.ts";
import { WriteLedger } from "../../bench/write-ledger.ts";
import { startDynalite } from "../../local/emulators.ts";
import { dynamoClient, freshTable } from "../support/dynamo-backends.ts";

/**
 * The bench's meters count what DynamoDB bills: a write that succeeded or lost its condition, not
 * one that was throttled or failed on the server (no capacity consumed), though the SDK's retry
 * of it is counted as any write. dynalite throttles nothing, so a throttle is injected once, below
 * the meters and above the real client's transport; the write itself reaches the real emulator.
 */

let stop: () => Promise<void>;
let client: ReturnType<typeof dynamoClient>;
let table: string;
const meter = new RequestMeter();
const ledger = new WriteLedger();
let throttleNext = 0;

beforeAll(async () => {
  const dynalite = await startDynalite();
  stop = dynalite.stop;
  client = dynamoClient(dynalite.endpoint);
  table = await freshTable(client, "meter");
  meter.attach(client, "dynamodb");
  ledger.attach(client);
  client.middlewareStack.add(
    (next) => async (args) => {
      if (throttleNext > 0) {
        throttleNext -= 1;
        throw Object.assign(new Error("Rate of requests exceeds the allowed throughput."), {
          name: "ThrottlingException",
          $fault: "client",
          $metadata: { httpStatusCode: 400 },
        });
      }
      return next(args);
    },
    { step: "deserialize", priority: "low", name: "injectThrottle" },
  );
});
afterAll(async () => {
  client?.destroy();
  await stop?.();
});

const put = (id: string, condition?: string) =>
  client.send(
    new PutItemCommand({
      TableName: table,
      Item: { pk: { S: `job#${id}` }, sk: { S: "job" } },
      ...(condition ? { ConditionExpression: condition } : {}),
    }),
  );

describe("the bench's meters count what DynamoDB bills", () => {
  test("a throttled attempt is unbilled, its retry and a lost condition are billed", async () => {
    meter.reset();
    ledger.reset();
    throttleNext = 1;
    await put("a");
    await expect(put("a", "attribute_not_exists(pk)")).rejects.toMatchObject({
      name: "ConditionalCheckFailedException",
    });

    const puts = meter.snapshot().operations["dynamodb:PutItem"];
    // Three attempts were sent: the throttled one, its retry, the lost condition.
    expect(puts).toMatchObject({ requests: 2, errors: 1, conditionalFailures: 1, unbilled: 1 });
    expect(ledger.snapshot().job).toMatchObject({ requests: 2, errors: 1, unbilled: 1 });
  });
});
