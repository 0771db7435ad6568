import { Cleanup } from "../lib/ops/cleanup.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine, logger } = engineFromEnv("skyforge-cleanup");
/** DynamoDB's TTL removes done and cancelled jobs on AWS; a sweep is opt-in (it reads the table). */
const sweepItemsPerRun = Number(process.env.SKYFORGE_CLEANUP_SWEEP_ITEMS ?? 0);
const cleanup = new Cleanup(engine, { sweepItemsPerRun });

/** EventBridge Scheduler, every minute. Returns (and logs) what it purged. */
export const handler = async () => {
  const report = await cleanup.run();
  logger.info("cleanup ran", { report });
  return report;
};
