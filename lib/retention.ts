/** TTL value (epoch seconds) for an item that may go `days` after `now`. */
export function retentionExpiry(now: number, days: number): number {
  return Math.floor(now / 1000) + Math.ceil(days * 86_400);
}
