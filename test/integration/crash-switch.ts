import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { S3Client } from "@aws-sdk/client-s3";
import type { SQSClient } from "@aws-sdk/client-sqs";
import { systemClock } from "../../lib/clock.ts";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import { buildEngine, openDurableRun } from "../../lib/engine.ts";
import { silentLog } from "../../lib/observability/log.ts";
import { MemoryMetrics } from "../../lib/observability/metrics.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import type { RunStamp } from "../../lib/store/lease-ops.ts";
import { dynamoClient, type Emulators, s3Client, sqsClient } from "../../local/emulators.ts";

/**
 * Fault injection for an in-process consumer: the real SDK clients it was built with, plus a
 * middleware that, once tripped, leaves every request hanging, its answer never delivered. From
 * that moment nothing the consumer sends lands and nothing it awaits returns, as if its process had
 * died: no claim, no heartbeat, no hold, no finalize. Also counts the requests by command.
 */
export interface CrashSwitch {
  readonly tripped: boolean;
  /** When it was tripped (epoch ms). */
  readonly crashedAt: number;
  /** Requests sent by command name (e.g. "ChangeMessageVisibilityBatchCommand"), counted before any crash. */
  sent(command: string): number;
  trip(): void;
}

export interface CrashOptions {
  /** Trip once this command (e.g. "ReceiveMessageCommand") has been answered. */
  afterAnswerTo?: string;
  /** Trip once a request this predicate picks has been answered (its answer is still lost). */
  afterAnswerMatching?: (command: string, input: Record<string, unknown>) => boolean;
}

export function crashSwitch(
  clients: readonly (SQSClient | DynamoDBClient | S3Client)[],
  options: CrashOptions = {},
): CrashSwitch {
  let crashedAt = 0;
  const counts = new Map<string, number>();
  const trip = () => {
    crashedAt ||= Date.now();
  };
  const hang = () => new Promise<never>(() => {});
  for (const client of clients) {
    (client as SQSClient).middlewareStack.add(
      (next, context) => async (args) => {
        if (crashedAt) return hang();
        const command = String(context.commandName);
        counts.set(command, (counts.get(command) ?? 0) + 1);
        const out = await next(args);
        if (crashedAt) return hang();
        if (command === options.afterAnswerTo) trip();
        if (options.afterAnswerMatching?.(command, args.input as Record<string, unknown>)) {
          trip();
          return hang();
        }
        return out;
      },
      { step: "initialize", name: "crashSwitch" },
    );
  }
  return {
    get tripped() {
      return crashedAt > 0;
    },
    get crashedAt() {
      return crashedAt;
    },
    sent: (command) => counts.get(command) ?? 0,
    trip,
  };
}

/**
 * A second engine on `twin`'s app, table and one of its queues, through its own SDK clients wired to
 * a crash switch: the consumer a test kills while the twin (or the local stack) carries on.
 */
export function doomedEngine(
  emu: Emulators,
  twin: Engine,
  queue: { name: string; url: string },
  options: { poolKinds?: PoolKindSpec[]; runner?: () => RunStamp } & CrashOptions = {},
): { engine: Engine; crash: CrashSwitch } {
  const dynamodb = dynamoClient(emu.dynamodb.endpoint);
  const sqs = sqsClient(emu.sqs.endpoint);
  const s3 = s3Client(emu.sqs.endpoint);
  const crash = crashSwitch([dynamodb, sqs, s3], options);
  const engine = buildEngine({
    durableRuns: openDurableRun,
    app: twin.app,
    poolKinds: options.poolKinds ?? [],
    dynamodb,
    sqs,
    s3,
    claimsBucket: twin.claims.bucket,
    table: twin.store.table,
    queueUrls: new Map([[queue.name, queue.url]]),
    clock: systemClock,
    metrics: new MemoryMetrics(),
    log: silentLog,
    ...(options.runner ? { runner: options.runner } : {}),
  });
  return { engine, crash };
}
