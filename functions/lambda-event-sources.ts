import {
  type EventSourceControl,
  LambdaEventSourceControl,
} from "../lib/queue-control/event-source-control.ts";

/**
 * The event source control on AWS: each queue's SQS event source mapping, through the Lambda API.
 * Only the functions that pause queues or change their concurrency (API and reaper) import this and
 * hand it to engineFromEnv, so the others never bundle @aws-sdk/client-lambda. There too the client
 * is made on first use: the API needs it only on its queue routes, and loading the package took
 * about 20 ms of a cold import (scripts/cold-start.ts).
 */
export function lambdaEventSources(mappings: ReadonlyMap<string, string>): EventSourceControl {
  let control: Promise<EventSourceControl> | undefined;
  const made = () => {
    control ??= import("@aws-sdk/client-lambda").then(
      ({ LambdaClient }) => new LambdaEventSourceControl(new LambdaClient({}), mappings),
    );
    return control;
  };
  return {
    apply: async (queue, intent) => (await made()).apply(queue, intent),
    describe: async (queue) => (await made()).describe(queue),
  };
}
