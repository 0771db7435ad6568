/**
 * AWS list prices the cost estimate uses, all in one place (us-east-1, USD, no free tier).
 * Check the cited pages when they change; nothing else in the project hard-codes a price.
 */
export interface Prices {
  dynamodb: {
    /** On-demand write request units (one WRU writes up to 1 KB). */
    usdPerMillionWriteRequestUnits: number;
    /** On-demand read request units (one RRU reads up to 4 KB strongly consistent, 8 KB eventually). */
    usdPerMillionReadRequestUnits: number;
  };
  sqs: {
    /** Standard queue requests, beyond the free tier's first million. */
    usdPerMillionRequests: number;
    /** Every chunk of this many bytes of an API action's payload is billed as one request. */
    billedChunkBytes: number;
  };
  lambda: {
    usdPerMillionRequests: number;
    /** arm64 duration, first pricing tier. */
    usdPerGbSecond: number;
  };
  s3: {
    /** PUT, COPY, POST, LIST requests (S3 Standard). */
    usdPerMillionPuts: number;
    /** GET, SELECT and all other requests. */
    usdPerMillionGets: number;
    /** S3 Standard storage, first 50 TB. */
    usdPerGbMonth: number;
  };
}

export const prices: Prices = {
  // https://aws.amazon.com/dynamodb/pricing/on-demand/
  // On-demand, us-east-1: $0.625 per million write request units, $0.125 per million read request units.
  dynamodb: {
    usdPerMillionWriteRequestUnits: 0.625,
    usdPerMillionReadRequestUnits: 0.125,
  },
  // https://aws.amazon.com/sqs/pricing/
  // Standard queue: $0.40 per million requests; each 64 KB chunk of a payload is billed as one request.
  sqs: {
    usdPerMillionRequests: 0.4,
    billedChunkBytes: 64 * 1024,
  },
  // https://aws.amazon.com/lambda/pricing/
  // Arm (Graviton2): $0.20 per million requests, $0.0000133334 per GB-second (first 7.5 billion GB-s/month).
  lambda: {
    usdPerMillionRequests: 0.2,
    usdPerGbSecond: 0.0000133334,
  },
  // https://aws.amazon.com/s3/pricing/
  // S3 Standard: $0.005 per 1,000 PUT requests, $0.0004 per 1,000 GET requests, $0.023 per GB-month.
  s3: {
    usdPerMillionPuts: 5,
    usdPerMillionGets: 0.4,
    usdPerGbMonth: 0.023,
  },
};

/**
 * What the durable scenario compares a step's and a sleep's price with (not a skyforge cost, so not in
 * Prices): AWS Lambda durable functions, December 2025, $8 per million durable operations (a step
 * and a wait are one each; their data written and kept is billed apart, per GB).
 * https://aws.amazon.com/lambda/pricing/
 */
export const lambdaDurablePrices = { usdPerMillionOperations: 8 };

/** Realtime's services at list price (docs/architecture.md §25): IoT Core, and API Gateway WebSocket APIs beside it. */
export const realtimePrices = {
  // https://aws.amazon.com/iot-core/pricing/
  // Messaging $1.00 per million messages (first billion a month), each 5 KB of a message one; a
  // publish and each delivery to a subscriber count. Connectivity $0.08 per million connection-minutes.
  iot: { usdPerMillionMessages: 1, billedMessageBytes: 5 * 1024, usdPerMillionConnectionMinutes: 0.08 },
  // https://aws.amazon.com/api-gateway/pricing/ (WebSocket APIs)
  // $1.00 per million messages (first billion), each 32 KB one; $0.25 per million connection-minutes.
  apiGatewayWebSocket: {
    usdPerMillionMessages: 1,
    billedMessageBytes: 32 * 1024,
    usdPerMillionConnectionMinutes: 0.25,
  },
} as const;
