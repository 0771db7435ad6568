import { prices as listPrices, type Prices } from "./prices.ts";

/** What one job costs in billable units, averaged over a run. All fields are per job. */
export interface JobUsage {
  /** Billed SQS requests (a request with a payload over 64 KB counts once per 64 KB chunk). */
  sqsRequests: number;
  /** DynamoDB write request units. */
  dynamodbWriteUnits: number;
  /** DynamoDB read request units. */
  dynamodbReadUnits: number;
  /** Lambda invocations (worker batches and enqueue calls, each shared by the jobs it carried). */
  lambdaInvocations: number;
  /** Lambda GB-seconds (memory in GB × billed duration in seconds, shared the same way). */
  lambdaGbSeconds: number;
  /** S3 PUT and GET requests of the claims bucket (payloads and results over 8 KiB). */
  s3Puts: number;
  s3Gets: number;
}

/** USD per million jobs, by line item. */
export interface CostBreakdown {
  sqs: number;
  dynamodbWrite: number;
  dynamodbRead: number;
  lambdaRequests: number;
  lambdaDuration: number;
  s3Requests: number;
}

export interface CostEstimate {
  usdPerMillionJobs: number;
  breakdown: CostBreakdown;
}

const MILLION = 1_000_000;

/**
 * usdPerMillionJobs from per-job usage at list prices: each line is units per job × a million jobs ×
 * the unit price. Pure: no rounding, no I/O.
 */
export function estimateCost(usage: JobUsage, prices: Prices = listPrices): CostEstimate {
  for (const [name, value] of Object.entries(usage)) {
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`${name} must be a finite number ≥ 0, got ${value}`);
  }
  // "per million units" prices × units per job = USD per million jobs.
  const breakdown: CostBreakdown = {
    sqs: usage.sqsRequests * prices.sqs.usdPerMillionRequests,
    dynamodbWrite: usage.dynamodbWriteUnits * prices.dynamodb.usdPerMillionWriteRequestUnits,
    dynamodbRead: usage.dynamodbReadUnits * prices.dynamodb.usdPerMillionReadRequestUnits,
    lambdaRequests: usage.lambdaInvocations * prices.lambda.usdPerMillionRequests,
    lambdaDuration: usage.lambdaGbSeconds * MILLION * prices.lambda.usdPerGbSecond,
    s3Requests: usage.s3Puts * prices.s3.usdPerMillionPuts + usage.s3Gets * prices.s3.usdPerMillionGets,
  };
  const usdPerMillionJobs =
    breakdown.sqs +
    breakdown.dynamodbWrite +
    breakdown.dynamodbRead +
    breakdown.lambdaRequests +
    breakdown.lambdaDuration +
    breakdown.s3Requests;
  return { usdPerMillionJobs, breakdown };
}

const DAYS_PER_MONTH = 365 / 12;

/**
 * What keeping a million jobs' claim objects costs in S3 Standard, given the bytes × days they are
 * kept per job (each object lives as long as its lifecycle class). Apart from the per-job figure,
 * which counts requests only, as it does for the table's storage.
 */
export function claimStorageUsdPerMillion(byteDaysPerJob: number, prices: Prices = listPrices): number {
  if (!Number.isFinite(byteDaysPerJob) || byteDaysPerJob < 0)
    throw new RangeError(`byteDaysPerJob must be a finite number ≥ 0, got ${byteDaysPerJob}`);
  return ((byteDaysPerJob * MILLION) / 1e9 / DAYS_PER_MONTH) * prices.s3.usdPerGbMonth;
}

/**
 * GB-seconds Lambda bills for one invocation: memory (MB / 1024) × duration rounded up to the
 * next millisecond.
 */
export function lambdaGbSeconds(memoryMb: number, durationMs: number): number {
  if (memoryMb <= 0 || durationMs < 0) throw new RangeError("memoryMb must be > 0 and durationMs ≥ 0");
  return (memoryMb / 1024) * (Math.ceil(durationMs) / 1000);
}

/** Billed SQS requests for one API action whose payload is `payloadBytes`: one per started 64 KB chunk, at least one. */
export function sqsBilledRequests(payloadBytes: number, prices: Prices = listPrices): number {
  return Math.max(1, Math.ceil(payloadBytes / prices.sqs.billedChunkBytes));
}
