import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { app } from "../../app/index.ts";
import { buildEngine, openDurableRun } from "../../lib/engine.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { unreachableClaims } from "./claims.ts";
import { ManualClock } from "./clock.ts";

/** A closed loopback port: a call that does go out fails at once instead of reaching anything. */
const NOWHERE = { region: "us-east-1", endpoint: "http://127.0.0.1:9", maxAttempts: 1 };

/**
 * The app's engine on clients that reach nothing, for tests of what happens before any AWS call:
 * route wiring, body limits. A call that does go out fails loudly.
 */
export function unreachableEngine(): Engine {
  return buildEngine({
    durableRuns: openDurableRun,
    app,
    dynamodb: new DynamoDBClient(NOWHERE),
    sqs: new SQSClient(NOWHERE),
    ...unreachableClaims(),
    table: "t",
    queueUrls: new Map(),
    clock: new ManualClock(),
    metrics: new MemoryMetrics(),
    log: silentLog,
  });
}
