import { createHash } from "node:crypto";
import { InvariantError } from "../errors.ts";
import {
  type ClaimPart,
  claimKey,
  eventDataKey,
  isDurableKeyOf,
  isEventDataKey,
  keptDays,
  needsClaimCheck,
} from "./claim-keys.ts";
import { type ClaimStore, copyClaim, getClaim, putClaim } from "./claim-store.ts";

const DAY_MS = 86_400_000;

/**
 * How long a durable job may still run after a body is written, beyond its waits, before it ends:
 * its retries and their backoff, a throttle's cool-down. A week.
 */
export const DURABLE_RUN_ALLOWANCE_MS = 7 * DAY_MS;

/**
 * Until when a durable body (a step's result, an event's data) must be kept (docs/architecture.md
 * §22, Retention): through the job's remaining wait (`waitEnd`; `now` while it runs), the allowance
 * to end after it, and then as long as its queue keeps it ended, the longer of done and dead (which
 * it ends as is not known yet). A wait that comes later moves the object (restowDurable).
 */
export function durableKeepUntil(
  now: number,
  waitEnd: number,
  retentionDays: { done: number; dead: number },
): number {
  return (
    Math.max(now, waitEnd) +
    DURABLE_RUN_ALLOWANCE_MS +
    Math.max(retentionDays.done, retentionDays.dead) * DAY_MS
  );
}

/**
 * Until when the object under `key`, written no earlier than `writtenAt`, is surely kept: its class
 * from then, less the day of margin claimKey adds. undefined for a key of no class.
 */
export function keptUntil(key: string, writtenAt: number): number | undefined {
  const days = keptDays(key);
  return days === undefined ? undefined : writtenAt + (days - 1) * DAY_MS;
}

/**
 * A job's durable object, `key` (the body of its step `step`), copied under the class that keeps it
 * until `keepUntil` (an object can't be kept longer where it is: its class is its key's prefix). An
 * event's data, which every job the event resumed shares, is copied under the job's own key.
 * result: the new key; undefined when the object is gone already (the replay that needs it ends the
 * job dead, naming its step).
 */
export async function restowDurable(
  claims: ClaimStore,
  jobId: string,
  body: { step: string; key: string },
  now: number,
  keepUntil: number,
): Promise<string | undefined> {
  const { step, key } = body;
  const shared = isEventDataKey(key);
  if (!shared && !isDurableKeyOf(key, jobId))
    throw new InvariantError(`job ${jobId}: ${key} is not one of its durable objects`);
  const part = shared ? stepPart(step, `e${now}`) : (key.slice(key.lastIndexOf("/") + 1) as ClaimPart);
  const moved = claimKey(jobId, part, now, keepUntil);
  return (await copyClaim(claims, key, moved)) ? moved : undefined;
}

/** A durable body as a record keeps it: JSON inline (v), or the key of its claims object (o). */
export type DurableBody = { v: string } | { o: string };

/** A step's object part: its name hashed (any text fits a key), with the attempt or the event's id. */
export function stepPart(name: string, suffix: string | number): ClaimPart {
  const hash = createHash("sha256").update(name).digest("base64url").slice(0, 22);
  return `step-${hash}-${suffix}`;
}

/**
 * Keeps a durable body (a step's result, an event's or token's data) inline, or over the claim
 * check's threshold (or when `forceObject`) in the claims bucket under the job's own key, kept until
 * `keepUntil` (ms).
 */
export async function stowDurable(
  claims: ClaimStore,
  job: { id: string; part: ClaimPart },
  json: string,
  now: number,
  keepUntil: number,
  forceObject = false,
): Promise<DurableBody> {
  if (!forceObject && !needsClaimCheck(json)) return { v: json };
  const key = claimKey(job.id, job.part, now, keepUntil);
  await putClaim(claims, key, json);
  return { o: key };
}

/**
 * Keeps an event's data for the jobs it resumes (docs/architecture.md §22): inline, or over the
 * threshold one object named by its digest, whichever job reads it. The same data writes the same
 * bytes under the same key, so a repeat (the event's continuation) leaves one object, its
 * lifecycle's clock started again.
 */
export async function stowEventData(
  claims: ClaimStore,
  json: string,
  now: number,
  keepUntil: number,
): Promise<DurableBody> {
  if (!needsClaimCheck(json)) return { v: json };
  const digest = createHash("sha256").update(json).digest("base64url");
  const key = eventDataKey(digest, now, keepUntil);
  await putClaim(claims, key, json);
  return { o: key };
}

/**
 * A durable body's JSON; undefined when its object has expired. Only the job's own keys are read,
 * and event data's (the one object every job an event resumed reads).
 */
export async function loadDurable(
  claims: ClaimStore,
  jobId: string,
  body: { v?: string | undefined; o?: string | undefined },
): Promise<string | undefined> {
  if (body.v !== undefined) return body.v;
  if (body.o === undefined) return undefined;
  if (!isDurableKeyOf(body.o, jobId) && !isEventDataKey(body.o))
    throw new InvariantError(`job ${jobId}: ${body.o} is not one of its durable objects`);
  return getClaim(claims, body.o);
}
