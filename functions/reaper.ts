import { reaperHandler } from "../lib/handlers/reaper.ts";
import { lambdaEventSources } from "./lambda-event-sources.ts";
import { engineFromEnv, handlerSettingsFromEnv } from "./runtime-config.ts";

const settings = handlerSettingsFromEnv();
const { engine, logger } = engineFromEnv("skyforge-reaper", { eventSources: lambdaEventSources });
const reaper = reaperHandler(engine, settings);

/** EventBridge Scheduler, every minute. Returns (and logs) what it did. */
export const handler = async () => {
  const report = await reaper();
  logger.info("reaper ran", { report });
  return report;
};
