import { describe, expect, test } from "vitest";
import {
  claimStorageUsdPerMillion,
  estimateCost,
  type JobUsage,
  lambdaGbSeconds,
  sqsBilledRequests,
} from "../../bench/cost-estimate.ts";
import { type Prices, prices } from "../../bench/prices.ts";

const none: JobUsage = {
  s3Puts: 0,
  s3Gets: 0,
  sqsRequests: 0,
  dynamodbWriteUnits: 0,
  dynamodbReadUnits: 0,
  lambdaInvocations: 0,
  lambdaGbSeconds: 0,
};

describe("list prices", () => {
  test("are the cited us-east-1 figures", () => {
    expect(prices.dynamodb.usdPerMillionWriteRequestUnits).toBe(0.625);
    expect(prices.dynamodb.usdPerMillionReadRequestUnits).toBe(0.125);
    expect(prices.sqs.usdPerMillionRequests).toBe(0.4);
    expect(prices.sqs.billedChunkBytes).toBe(65_536);
    expect(prices.lambda.usdPerMillionRequests).toBe(0.2);
    expect(prices.lambda.usdPerGbSecond).toBe(0.0000133334);
  });
});

describe("estimateCost", () => {
  test("no usage costs nothing", () => {
    const { usdPerMillionJobs, breakdown } = estimateCost(none);
    expect(usdPerMillionJobs).toBe(0);
    expect(Object.values(breakdown)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  test("one unit of each kind per job costs its list price per million jobs", () => {
    expect(estimateCost({ ...none, sqsRequests: 1 }).usdPerMillionJobs).toBeCloseTo(0.4, 12);
    expect(estimateCost({ ...none, dynamodbWriteUnits: 1 }).usdPerMillionJobs).toBeCloseTo(0.625, 12);
    expect(estimateCost({ ...none, s3Puts: 1 }).usdPerMillionJobs).toBeCloseTo(5, 12);
    expect(estimateCost({ ...none, s3Gets: 1 }).usdPerMillionJobs).toBeCloseTo(0.4, 12);
    expect(estimateCost({ ...none, dynamodbReadUnits: 1 }).usdPerMillionJobs).toBeCloseTo(0.125, 12);
    expect(estimateCost({ ...none, lambdaInvocations: 1 }).usdPerMillionJobs).toBeCloseTo(0.2, 12);
    // 1 GB-s per job × 1,000,000 jobs × $0.0000133334
    expect(estimateCost({ ...none, lambdaGbSeconds: 1 }).usdPerMillionJobs).toBeCloseTo(13.3334, 9);
  });

  test("the fenced path by hand: 3 writes, batched SQS, shared invocations", () => {
    // SendMessageBatch, ReceiveMessage and DeleteMessageBatch each carry 10 jobs → 0.3 requests/job.
    // putJob + claim + finalize at 1 WCU each; a cooldown read now and then (0.05 RCU/job).
    // Worker: one invocation per 10 jobs, 512 MB × 60 ms = 0.03 GB-s → 0.003 GB-s/job.
    // Enqueue: one invocation per 100 jobs, 512 MB × 100 ms = 0.05 GB-s → 0.0005 GB-s/job.
    const usage: JobUsage = {
      sqsRequests: 0.3,
      dynamodbWriteUnits: 3,
      dynamodbReadUnits: 0.05,
      lambdaInvocations: 0.1 + 0.01,
      lambdaGbSeconds: 0.003 + 0.0005,
      s3Puts: 0,
      s3Gets: 0,
    };
    const { usdPerMillionJobs, breakdown } = estimateCost(usage);
    expect(breakdown.sqs).toBeCloseTo(0.12, 12); // 0.3 × 0.40
    expect(breakdown.dynamodbWrite).toBeCloseTo(1.875, 12); // 3 × 0.625
    expect(breakdown.dynamodbRead).toBeCloseTo(0.00625, 12); // 0.05 × 0.125
    expect(breakdown.lambdaRequests).toBeCloseTo(0.022, 12); // 0.11 × 0.20
    expect(breakdown.lambdaDuration).toBeCloseTo(0.0466669, 9); // 3500 GB-s × 0.0000133334
    // 0.12 + 1.875 + 0.00625 + 0.022 + 0.0466669
    expect(usdPerMillionJobs).toBeCloseTo(2.0699169, 9);
    expect(usdPerMillionJobs).toBeLessThanOrEqual(2.1);
  });

  test("the total is the sum of the breakdown", () => {
    const usage: JobUsage = {
      sqsRequests: 0.7,
      dynamodbWriteUnits: 5,
      dynamodbReadUnits: 2.5,
      lambdaInvocations: 1.01,
      lambdaGbSeconds: 0.0625,
      s3Puts: 1,
      s3Gets: 2,
    };
    const { usdPerMillionJobs, breakdown } = estimateCost(usage);
    const sum = Object.values(breakdown).reduce((a, b) => a + b, 0);
    expect(usdPerMillionJobs).toBeCloseTo(sum, 12);
    expect(breakdown.s3Requests).toBeCloseTo(5.8, 12); // 1 × 5 + 2 × 0.4
    // 0.28 + 3.125 + 0.3125 + 0.202 + 0.8333375 + 5.8
    expect(usdPerMillionJobs).toBeCloseTo(10.5528375, 9);
  });

  test("uses the prices it is given", () => {
    const doubled: Prices = {
      dynamodb: { usdPerMillionWriteRequestUnits: 1.25, usdPerMillionReadRequestUnits: 0.25 },
      sqs: { usdPerMillionRequests: 0.8, billedChunkBytes: 65_536 },
      lambda: { usdPerMillionRequests: 0.4, usdPerGbSecond: 0.0000266668 },
      s3: { usdPerMillionPuts: 10, usdPerMillionGets: 0.8, usdPerGbMonth: 0.046 },
    };
    const usage: JobUsage = {
      sqsRequests: 0.3,
      dynamodbWriteUnits: 3,
      dynamodbReadUnits: 0.05,
      lambdaInvocations: 0.11,
      lambdaGbSeconds: 0.0035,
      s3Puts: 1,
      s3Gets: 1,
    };
    expect(estimateCost(usage, doubled).usdPerMillionJobs).toBeCloseTo(2 * (2.0699169 + 5.4), 9);
  });

  test("rejects negative or non-finite usage", () => {
    expect(() => estimateCost({ ...none, sqsRequests: -0.1 })).toThrow(RangeError);
    expect(() => estimateCost({ ...none, dynamodbWriteUnits: Number.NaN })).toThrow(/dynamodbWriteUnits/);
    expect(() => estimateCost({ ...none, lambdaGbSeconds: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });
});

describe("claimStorageUsdPerMillion", () => {
  test("bytes × days kept, as GB-months at S3 Standard's price", () => {
    // A million 200 KB objects kept 30 days: 204.8 GB for 30/30.4167 of a month at $0.023.
    expect(claimStorageUsdPerMillion(204_800 * 30)).toBeCloseTo((204.8 * 30 * 0.023) / (365 / 12), 9);
    expect(claimStorageUsdPerMillion(0)).toBe(0);
    expect(() => claimStorageUsdPerMillion(-1)).toThrow(RangeError);
  });
});

describe("lambdaGbSeconds", () => {
  test("memory in GB (MB / 1024) × duration rounded up to the millisecond", () => {
    expect(lambdaGbSeconds(512, 60)).toBeCloseTo(0.03, 12);
    expect(lambdaGbSeconds(512, 59.2)).toBeCloseTo(0.03, 12); // billed as 60 ms
    expect(lambdaGbSeconds(1024, 1000)).toBeCloseTo(1, 12);
    expect(lambdaGbSeconds(128, 0.4)).toBeCloseTo(0.000125, 12); // 1/8 GB × 1 ms
    expect(lambdaGbSeconds(512, 0)).toBe(0);
  });

  test("rejects impossible inputs", () => {
    expect(() => lambdaGbSeconds(0, 10)).toThrow(RangeError);
    expect(() => lambdaGbSeconds(512, -1)).toThrow(RangeError);
  });
});

describe("sqsBilledRequests", () => {
  test("one request per started 64 KB chunk, at least one", () => {
    expect(sqsBilledRequests(0)).toBe(1);
    expect(sqsBilledRequests(256)).toBe(1);
    expect(sqsBilledRequests(65_536)).toBe(1);
    expect(sqsBilledRequests(65_537)).toBe(2);
    expect(sqsBilledRequests(256 * 1024)).toBe(4); // the pricing page's example
  });
});
