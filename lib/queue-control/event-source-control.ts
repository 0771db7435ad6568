import type { LambdaClient } from "@aws-sdk/client-lambda";

/**
 * The Lambda package is loaded on first use, so a function whose control is made on first use
 * (functions/lambda-event-sources.ts) doesn't load it at init: a static import here would be
 * hoisted into the function's bundle.
 */
const lambdaPackage = () => import("@aws-sdk/client-lambda");

/** What should feed a queue's worker: on or off, and how many invocations at once. */
export interface EventSourceIntent {
  enabled: boolean;
  maxConcurrency: number;
}

export interface EventSourceState extends EventSourceIntent {
  /** Lambda's own word for it (Enabled, Disabling, Updating, ...) or "local". */
  state: string;
  /**
   * Whether the worker's partial batch response is honoured (ReportBatchItemFailures): without it,
   * one failed record sends its whole batch back (`skyforge doctor`).
   */
  reportsBatchItemFailures: boolean;
}

/** Whatever turns a queue's messages into worker invocations: Lambda's mapping, or the local poller. */
export interface EventSourceControl {
  apply(queue: string, intent: EventSourceIntent): Promise<void>;
  /** undefined when this queue has no event source here (e.g. a pool queue). */
  describe(queue: string): Promise<EventSourceState | undefined>;
}

/**
 * The AWS path: each Lambda-tier queue's SQS event source mapping, by UUID. Disabling the mapping
 * stops receives, so a paused queue's messages sit untouched: no receive counts, no dead letters.
 */
export class LambdaEventSourceControl implements EventSourceControl {
  private readonly lambda: LambdaClient;
  /** queue name → event source mapping UUID */
  private readonly mappings: ReadonlyMap<string, string>;

  constructor(lambda: LambdaClient, mappings: ReadonlyMap<string, string>) {
    this.lambda = lambda;
    this.mappings = mappings;
  }

  async apply(queue: string, intent: EventSourceIntent): Promise<void> {
    const UUID = this.mappings.get(queue);
    if (!UUID) return;
    const { UpdateEventSourceMappingCommand } = await lambdaPackage();
    await this.lambda.send(
      new UpdateEventSourceMappingCommand({
        UUID,
        Enabled: intent.enabled,
        ScalingConfig: { MaximumConcurrency: intent.maxConcurrency },
      }),
    );
  }

  async describe(queue: string): Promise<EventSourceState | undefined> {
    const UUID = this.mappings.get(queue);
    if (!UUID) return undefined;
    const { GetEventSourceMappingCommand } = await lambdaPackage();
    const out = await this.lambda.send(new GetEventSourceMappingCommand({ UUID }));
    const state = out.State ?? "Unknown";
    return {
      enabled: state === "Enabled" || state === "Enabling",
      maxConcurrency: out.ScalingConfig?.MaximumConcurrency ?? 0,
      state,
      reportsBatchItemFailures: (out.FunctionResponseTypes ?? []).includes("ReportBatchItemFailures"),
    };
  }
}

/** The intent and the mapping disagree (and the mapping isn't mid-change, which would reject an update). */
export function needsRepair(intent: EventSourceIntent, actual: EventSourceState): boolean {
  if (["Creating", "Updating", "Enabling", "Disabling", "Deleting"].includes(actual.state)) return false;
  return actual.enabled !== intent.enabled || actual.maxConcurrency !== intent.maxConcurrency;
}
