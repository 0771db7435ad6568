import type { StoreTransitions } from "../job/status.ts";
import { itemMissing, statusIs } from "./conditions.ts";
import { conditionalPut, orOnConflict, type StoreContext } from "./context.ts";
import { or } from "./expression.ts";
import { itemFields } from "./job-field-copies.ts";
import { type JobItem, type JobSeed, resultFields, type StoredResult } from "./job-item.ts";
import { indexKeys, jobKey } from "./keys.ts";
import { formatStamp } from "./stored-formats.ts";

/** How an unclaimed run ended, as the at-least-once and fire-and-forget lanes record it. */
export type RecordedOutcome =
  | { status: "done"; result: StoredResult; expiresAt: number }
  /** `unstarted`: the handler was never called (its start deadline passed): no attempt, no start. */
  | { status: "dead"; error: string; expiresAt: number; unstarted?: true }
  /** A failed attempt that will be retried (fire-and-forget records failures). */
  | { status: "queued"; error: string; runAt: number };

/**
 * recordOutcome — the one write of a run that took no claim (docs/architecture.md §16).
 * input: the seed from the message, the attempt (the message's receive count), the outcome (a
 *   delivery that ended before its handler was called counts no attempt and records no start).
 * condition: no item yet, or a queued one (a failure recorded before): a finished job is never
 *   overwritten, and a duplicate run that ends second writes nothing.
 * result: { recorded: true, item } or { recorded: false, current }.
 */
export async function recordOutcome(
  ctx: StoreContext,
  seed: JobSeed,
  attempt: number,
  outcome: RecordedOutcome,
): Promise<{ recorded: true; item: JobItem } | { recorded: false; current: JobItem | undefined }> {
  const now = ctx.clock.now();
  const item: JobItem = {
    ...jobKey(seed.id),
    ...itemFields(seed),
    status: outcome.status,
    ...(outcome.status === "dead" && outcome.unstarted
      ? { attempts: attempt - 1 }
      : { attempts: attempt, startedAt: now }),
    ...(outcome.status === "done"
      ? { ...resultFields(outcome.result), finishedAt: now, expiresAt: outcome.expiresAt }
      : {}),
    ...(outcome.status === "dead"
      ? {
          lastError: outcome.error,
          finishedAt: now,
          expiresAt: outcome.expiresAt,
          ...indexKeys(seed.queue, "dead", seed.id, now, ctx.layout.indexShards),
        }
      : {}),
    ...(outcome.status === "queued" ? { lastError: outcome.error, runAt: outcome.runAt } : {}),
    ...formatStamp("job"),
  };
  const write = conditionalPut(
    ctx,
    `recordOutcome:${outcome.status}`,
    item as JobItem & Record<string, unknown>,
    or(itemMissing, statusIs("queued")),
  );
  return orOnConflict(
    write.then(() => ({ recorded: true as const, item })),
    (current: JobItem | undefined) => ({ recorded: false as const, current }),
  );
}

export const recordOutcomeTransitions = [
  ["missing", "done"],
  ["missing", "dead"],
  ["missing", "queued"],
  ["queued", "done"],
  ["queued", "dead"],
] as const satisfies StoreTransitions;
