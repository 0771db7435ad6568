import { LambdaClient } from "@aws-sdk/client-lambda";
import {
  type EventSourceControl,
  LambdaEventSourceControl,
} from "../lib/queue-control/event-source-control.ts";

/**
 * The event source control on AWS: each queue's SQS event source mapping, through the Lambda API.
 * Only the functions that pause queues or change their concurrency (API and reaper) import this and
 * hand it to engineFromEnv, so the others never load @aws-sdk/client-lambda at cold start.
 */
export function lambdaEventSources(mappings: ReadonlyMap<string, string>): EventSourceControl {
  return new LambdaEventSourceControl(new LambdaClient({}), mappings);
}
