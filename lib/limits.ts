/**
 * SQS's hard limits, defined once. Every clamp, schema bound and deploy check reads these.
 * See docs/architecture.md §6.
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
