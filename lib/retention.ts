/** TTL value (epoch seconds) for an item that may go `days` after `now`. */
export function retentionExpiry(now: number, days: number): number {
  return Math.floor(now / 1000) + Math.ceil(days * 86_400);
}

/**
 * The TTL of an item that outlives any one queue's jobs (a group, a cancel's tombstone): the longest
 * dead-job retention of all the queues, counted from `now`.
 */
export function longestRetentionExpiry(
  now: number,
  queues: readonly { retentionDays: { dead: number } }[],
): number {
  return retentionExpiry(now, Math.max(...queues.map((q) => q.retentionDays.dead)));
}
