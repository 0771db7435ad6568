/**
 * The claim check's object layout (docs/architecture.md §17): a payload or result over
 * CLAIM_CHECK_BYTES lives in the claims bucket, and the job's item and message carry only its key.
 * Pure: infra and the local stack read the lifecycle rules from here, so both expire the same way.
 */

/**
 * At or under this many bytes a payload or result stays in DynamoDB as before; above it, one S3 PUT
 * and GET (about $5.4 per million) cost less than writing it at 1 WCU per KB ($0.625 per million
 * each): the two meet near 8.6 KB.
 */
export const CLAIM_CHECK_BYTES = 8 * 1024;

/** Every claim object's key starts with this; the functions' grants cover only this prefix. */
export const CLAIMS_PREFIX = "claims/";

/**
 * A completed token's data object, `claims/<days>d/<job id>/token-<token id>`, as an IAM resource
 * pattern (`*` spans the class and the job id): the token callback may write these and nothing else.
 */
export const TOKEN_OBJECTS_PATTERN = `${CLAIMS_PREFIX}*/token-*`;

/**
 * How long objects may live, in days: each is a key prefix with a lifecycle rule that expires its
 * objects that many days after they were written. An object goes under the shortest class that
 * outlives its job's retention: past a week, never more than half as long again as needed.
 */
export const RETENTION_CLASSES_DAYS = [
  1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 17, 21, 25, 30, 35, 40, 45, 60, 75, 90, 120, 150, 180, 240, 300, 365,
  545, 730, 1095, 1460, 2190, 2920, 3650, 36_500,
] as const;

const DAY_MS = 86_400_000;

/** step-/token-: a durable job's step result or event data, and a token's data (docs/architecture.md §22). */
export type ClaimPart = "payload" | `result-${number}` | `step-${string}` | `token-${string}`;

/**
 * The key of a job's payload or of one attempt's result, kept until at least `keepUntil` (epoch ms):
 * `claims/<days>d/<job id>/<part>`. A result is keyed by its attempt, so a run that lost its lease
 * never overwrites the object the job's finalize points to.
 */
export function claimKey(jobId: string, part: ClaimPart, now: number, keepUntil: number): string {
  return `${retentionPrefix(now, keepUntil)}${jobId}/${part}`;
}

/** `claims/<days>d/`: the shortest retention class that keeps an object written now until `keepUntil`. */
function retentionPrefix(now: number, keepUntil: number): string {
  const days = Math.ceil(Math.max(0, keepUntil - now) / DAY_MS) + 1;
  const retention = RETENTION_CLASSES_DAYS.find((d) => d >= days) ?? RETENTION_CLASSES_DAYS.at(-1);
  return `${CLAIMS_PREFIX}${retention}d/`;
}

/** An event's data: named by its SHA-256 (43 base64url characters), under `events/`, no job's id. */
const EVENT_DATA_KEY = /^claims\/(\d+)d\/events\/[A-Za-z0-9_-]{43}$/;

/**
 * The key of an event's data over the threshold (docs/architecture.md §22): one object for every
 * job the event resumes, named by its bytes' digest, so the same data sent again (an event's
 * continuation) names the same object. `events/` is no job's id (those are ULIDs).
 */
export function eventDataKey(digest: string, now: number, keepUntil: number): string {
  return `${retentionPrefix(now, keepUntil)}events/${digest}`;
}

/** Whether `key` is exactly one that eventDataKey gives: a retention class, `events/` and a digest. */
export function isEventDataKey(key: string): boolean {
  const days = EVENT_DATA_KEY.exec(key)?.[1];
  return days !== undefined && (RETENTION_CLASSES_DAYS as readonly number[]).includes(Number(days));
}

/**
 * Whether `key` is exactly one that claimKey gives this job's `part`: `claims/<days>d/<jobId>/<part>`
 * with `days` one of the retention classes. A message or item naming any other key (another job's
 * object, a result, a key outside claims/) must never have it read on that job's behalf: whoever can
 * send to a queue could otherwise have a worker fetch, and hand to a handler, any object the
 * functions' grants reach.
 */
export function isClaimKeyOf(key: string, jobId: string, part: ClaimPart): boolean {
  const days = keptDays(key);
  if (days === undefined || !(RETENTION_CLASSES_DAYS as readonly number[]).includes(days)) return false;
  return key === `${CLAIMS_PREFIX}${days}d/${jobId}/${part}`;
}

/** Whether `key` is one of this job's result objects: `claims/<days>d/<jobId>/result-<attempt>`. */
export function isResultKeyOf(key: string, jobId: string): boolean {
  const attempt = /\/result-([1-9]\d{0,5})$/.exec(key)?.[1];
  return attempt !== undefined && isClaimKeyOf(key, jobId, `result-${Number(attempt)}`);
}

/** Whether `key` is one of this job's durable objects: `claims/<days>d/<jobId>/(step|token)-<name>`. */
export function isDurableKeyOf(key: string, jobId: string): boolean {
  const part = /\/((?:step|token)-[A-Za-z0-9_-]{1,80})$/.exec(key)?.[1];
  return part !== undefined && isClaimKeyOf(key, jobId, part as ClaimPart);
}

/** How many days the lifecycle keeps the object under `key` (its retention class); undefined for other keys. */
export function keptDays(key: string): number | undefined {
  const match = /^claims\/(\d+)d\//.exec(key);
  return match ? Number(match[1]) : undefined;
}

/** One lifecycle rule per retention class, in the shape S3's PutBucketLifecycleConfiguration takes. */
export interface ClaimLifecycleRule {
  id: string;
  prefix: string;
  expirationDays: number;
}

export function claimLifecycleRules(): ClaimLifecycleRule[] {
  return RETENTION_CLASSES_DAYS.map((days) => ({
    id: `claims-${days}d`,
    prefix: `${CLAIMS_PREFIX}${days}d/`,
    expirationDays: days,
  }));
}

/** Whether a serialized payload or result goes to the bucket. */
export const needsClaimCheck = (json: string): boolean => Buffer.byteLength(json) > CLAIM_CHECK_BYTES;
