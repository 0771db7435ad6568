/**
 * The deployment's settings for the handlers that need any, as data: functions/engine-config.ts
 * reads them from the environment, the local stack passes its own.
 */
export interface HandlerSettings {
  /** How often the scheduled handlers run (EventBridge Scheduler: every 60 s); the reaper's stale sweep and the cron's horizon follow it. */
  tickMs: number;
  /** Items cleanup sweeps per run: 0 on AWS, where DynamoDB's TTL removes ended jobs; some where the table has no TTL. */
  cleanupSweepItemsPerRun: number;
}
