import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { SQSClient } from "@aws-sdk/client-sqs";
import { expect, test } from "vitest";
import { app } from "../../app/index.ts";
import { API_ROUTE_KEYS } from "../../lib/api/route-keys.ts";
import { apiRoutes } from "../../lib/api/routes.ts";
import { buildEngine } from "../../lib/engine.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import { unreachableClaims } from "../support/claims.ts";
import { ManualClock } from "../support/clock.ts";

test("infra declares exactly the routes the API serves", () => {
  // Nothing is sent: building the routes only wires handlers.
  const engine = buildEngine({
    app,
    dynamodb: new DynamoDBClient({ region: "us-east-1" }),
    sqs: new SQSClient({ region: "us-east-1" }),
    ...unreachableClaims(),
    table: "t",
    queueUrls: new Map(),
    clock: new ManualClock(),
    metrics: new MemoryMetrics(),
    log: silentLog,
  });
  const served = apiRoutes(engine).map((r) => `${r.method} ${r.path}`);
  expect([...served].sort()).toEqual([...API_ROUTE_KEYS].sort());
});
