import { runReaper } from "../lib/ops/reaper.ts";
import { lambdaEventSources } from "./lambda-event-sources.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine, logger } = engineFromEnv("skyforge-reaper", { eventSources: lambdaEventSources });

/** EventBridge Scheduler, every minute. Returns (and logs) what it did. */
export const handler = async () => {
  const report = await runReaper(engine);
  logger.info("reaper ran", { report });
  return report;
};
