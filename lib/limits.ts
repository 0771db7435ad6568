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
