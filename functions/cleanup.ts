import { cleanupHandler } from "../lib/handlers/cleanup.ts";
import { engineFromEnv, handlerSettingsFromEnv } from "./runtime-config.ts";

const settings = handlerSettingsFromEnv();
const { engine, logger } = engineFromEnv("skyforge-cleanup");
const cleanup = cleanupHandler(engine, settings);

/** EventBridge Scheduler, every minute. Returns (and logs) what it purged. */
export const handler = async () => {
  const report = await cleanup();
  logger.info("cleanup ran", { report });
  return report;
};
