import type { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import type { SQSClient } from "@aws-sdk/client-sqs";

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

export function crashSwitch(
  clients: readonly (SQSClient | DynamoDBClient)[],
  options: { afterAnswerTo?: string } = {},
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
