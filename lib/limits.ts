/**
 * Hard limits (SQS's, Lambda's, and the API's own that follow from them), defined once. Every clamp,
 * schema bound, body cap and deploy check reads these. See docs/architecture.md §6.
 */

/** SQS caps a message's visibility timeout (and so one ChangeMessageVisibility) at 12 hours. */
export const MAX_VISIBILITY_SECONDS = 12 * 3600;

/**
 * SQS caps DelaySeconds at 15 minutes: a job due later is stored `scheduled`, and the reaper sends
 * its message once it falls within this horizon.
 */
export const MAX_DELAY_SECONDS = 15 * 60;

/**
 * How long SQS keeps a message: 14 days, its maximum. Infra and the local stack give every main queue
 * and DLQ this, so a paused queue or a long retry chain has as long as SQS allows before a job's
 * message is dropped while its item still says queued; an alarm and the reaper's stale-message pass
 * act well before it (docs/architecture.md §7).
 */
export const QUEUE_MESSAGE_RETENTION_SECONDS = 14 * 86_400;

const MiB = 1024 * 1024;

/**
 * The largest request body the API reads, on any route: Lambda's 6 MB synchronous payload, which no
 * deployed API function can receive more than. The local server stops reading at it; the API refuses
 * a body over its route's cap before decoding or parsing it, so its cost never reaches the parser.
 */
export const MAX_API_BODY_BYTES = 6 * MiB;

/**
 * POST /jobs: one enqueue request. Its payload is at most 1 MiB once serialized (MAX_PAYLOAD_BYTES in
 * lib/job/schemas.ts); the body may spell the same payload out up to three times longer (a `\uXXXX`
 * escape is 6 bytes for a character of 2 or 3 UTF-8 bytes, 12 for one of 4, as Python's json.dumps
 * writes by default), plus the request's other fields. A longer body can't carry a payload the API
 * would take, so it is a 413 before it is parsed.
 */
export const MAX_ENQUEUE_BODY_BYTES = 3 * MiB + 64 * 1024;

/** PUT /schedules/{name}: a schedule's payload is at most 8 KiB serialized; the same reasoning as above. */
export const MAX_SCHEDULE_BODY_BYTES = 64 * 1024;
