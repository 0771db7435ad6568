import { createHash } from "node:crypto";
import { InvariantError } from "../errors.ts";
import {
  type ClaimPart,
  claimKey,
  eventDataKey,
  isDurableKeyOf,
  isEventDataKey,
  needsClaimCheck,
} from "./claim-keys.ts";
import { type ClaimStore, getClaim, putClaim } from "./claim-store.ts";

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
