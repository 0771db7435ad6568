import { InvariantError } from "../errors.ts";
import { attributeAtLeast, attributeAtMost, attributeBefore, attributeMissing } from "./conditions.ts";
import { conditionalUpdate, orOnConflict, type StoreContext } from "./context.ts";
import { and, or, Update } from "./expression.ts";
import { rateLimitKey } from "./keys.ts";
import { stampFormat } from "./stored-formats.ts";

/**
 * Which side of `now` the caller believes the bucket's tat is on. An UpdateExpression has no max(),
 * so "tat = max(tat, now) + cost" is split into two writes whose conditions pick the branch:
 * - idle: tat is absent or in the past (bucket full), so the new tat is now + cost, computed here;
 * - busy: tat is at or after now, so DynamoDB adds cost to the tat it holds.
 */
export type TakeForm = "idle" | "busy";

/** The form whose condition a bucket whose tat is `tat` (undefined: no item) meets at `now`. */
export const formFor = (tat: number | undefined, now: number): TakeForm =>
  tat !== undefined && tat >= now ? "busy" : "idle";

export interface TakeTokens {
  form: TakeForm;
  /** The instant the caller decided at; the condition compares tat against it. */
  now: number;
  /** n tokens × the emission interval, in ms. */
  cost: number;
  /** The latest tat at which the tokens still fit (busy form only; an idle bucket always fits). */
  limit: number;
}

/** Taken: the tat now stored. Not taken: the tat DynamoDB holds (undefined when the item is missing). */
export type TakeResult = { taken: true; tat: number } | { taken: false; tat: number | undefined };

/**
 * takeTokens — spend tokens from a bucket (GCRA: the item holds only `tat`, epoch ms).
 * input: the bucket (scope, and the key of a keyed bucket), the form, now, cost and limit from
 *   lib/rate-limit/gcra.ts.
 * condition: idle: tat is missing OR tat < now. busy: now <= tat <= limit.
 * result: idle: tat = now + cost. busy: tat = tat + cost. The stored tat is returned. On a lost
 *   condition, the current tat (wrong form, or no room): the caller decides from it without a read.
 */
export async function takeTokens(
  ctx: StoreContext,
  bucket: { scope: string; key?: string },
  take: TakeTokens,
): Promise<TakeResult> {
  const item = rateLimitKey(bucket.scope, bucket.key);
  const write = conditionalUpdate<{ tat: number }>(ctx, "takeTokens", item, (e) =>
    take.form === "idle"
      ? {
          // Only an idle take may create the bucket: a busy one needs its tat.
          update: stampFormat(new Update(e).set("tat", take.now + take.cost), "rateBucket"),
          condition: or(attributeMissing("tat"), attributeBefore("tat", take.now)),
        }
      : {
          update: new Update(e).increment("tat", take.cost),
          condition: and(attributeAtLeast("tat", take.now), attributeAtMost("tat", take.limit)),
        },
  );
  return orOnConflict(
    write.then((item): TakeResult => ({ taken: true, tat: item.tat })),
    (current: { tat?: number } | undefined): TakeResult => ({ taken: false, tat: current?.tat }),
  );
}

/** A start reserved: the bucket's tat before it (undefined: the bucket was idle) and after it. */
export interface ReservedStart {
  before: number | undefined;
  tat: number;
}

/**
 * reserveStart — one start on a key's rate, reserved even when it must wait (GCRA with
 * reservations: a flow-controlled job takes its turn once, then waits for it, docs/architecture.md
 * §20). Two forms, as takeTokens: a bucket that is idle gets tat = now + interval (condition: tat
 * missing or before now); a busy one gets interval added to its tat (condition: tat at or after
 * now), with no upper bound: the caller waits until its turn. The first form tried is the one `known`
 * (the tat the caller last saw, lib/rate-limit/tat-memory.ts) says; a lost condition hands back the
 * tat DynamoDB holds, which picks the next. So a rate under its limit costs one write a start, and
 * one at its limit too, once the caller has seen the bucket.
 * result: the bucket's tat before this start and after it.
 */
export async function reserveStart(
  ctx: StoreContext,
  bucket: { scope: string; key: string },
  now: number,
  intervalMs: number,
  known?: number,
): Promise<ReservedStart> {
  let form = formFor(known, now);
  for (let look = 0; look < 4; look++) {
    const took = await takeTokens(
      ctx,
      bucket,
      form === "busy"
        ? { form, now, cost: intervalMs, limit: Number.MAX_SAFE_INTEGER }
        : { form, now, cost: intervalMs, limit: 0 },
    );
    if (took.taken) return { before: form === "busy" ? took.tat - intervalMs : undefined, tat: took.tat };
    form = formFor(took.tat, now);
  }
  throw new InvariantError(`rate bucket ${bucket.scope}/${bucket.key}: no form took after 4 looks`);
}
