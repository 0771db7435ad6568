import type { Context } from "aws-lambda";
import { CronHandler } from "../lib/handlers/cron.ts";
import { engineFromEnv, handlerSettingsFromEnv } from "./runtime-config.ts";

const settings = handlerSettingsFromEnv();
const { engine, logger } = engineFromEnv("skyforge-cron");
/** Syncs the declared schedules on the container's first tick: a deploy brings new code, hence new containers. */
const cron = new CronHandler(engine, settings);

/** EventBridge Scheduler, every minute: the leader enqueues every due fire. */
export const handler = async (_event: unknown, context: Context) => {
  const report = await cron.run(context.awsRequestId);
  engine.metrics.flush();
  logger.info("cron ran", { report });
  return report;
};
