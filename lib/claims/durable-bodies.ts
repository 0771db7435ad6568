import { createHash } from "node:crypto";
import { InvariantError } from "../errors.ts";
import { type ClaimPart, claimKey, isDurableKeyOf, needsClaimCheck } from "./claim-keys.ts";
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

/** A durable body's JSON; undefined when its object has expired. Only the job's own keys are read. */
export async function loadDurable(
  claims: ClaimStore,
  jobId: string,
  body: { v?: string | undefined; o?: string | undefined },
): Promise<string | undefined> {
  if (body.v !== undefined) return body.v;
  if (body.o === undefined) return undefined;
  if (!isDurableKeyOf(body.o, jobId))
    throw new InvariantError(`job ${jobId}: ${body.o} is not one of its durable objects`);
  return getClaim(claims, body.o);
}
