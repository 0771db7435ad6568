/** How a tick treats fires it missed by more than its grace: drop them, or run one job for all. */
export const misfirePolicies = ["skip", "once"] as const;
export type MisfirePolicy = (typeof misfirePolicies)[number];

/**
 * A schedule that lives in the app's code: synced into the table by every deploy (and by the local
 * stack's start). `Kind` and `Queue` are the app's names, so a typo is a compile error; the cron
 * expression and time zone are checked when the sync parses it.
 */
export interface ScheduleDeclaration<
  Kind extends string = string,
  Queue extends string = string,
  Payload = unknown,
> {
  name: string;
  /** 5 fields, or 6 with a leading seconds field. */
  cron: string;
  /** An IANA name; UTC when left out. */
  timezone?: string;
  kind: Kind;
  payload?: Payload;
  queue?: Queue;
  enabled?: boolean;
  misfire?: MisfirePolicy;
}
