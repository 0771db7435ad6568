import type { Context } from "aws-lambda";
import { runCronTick } from "../lib/ops/cron-tick.ts";
import { syncDeclaredSchedules } from "../lib/ops/sync-schedules.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine, logger } = engineFromEnv("skyforge-cron");
const tickMs = Number(process.env.SKYFORGE_TICK_SECONDS ?? 60) * 1000;
/** Code-declared schedules are synced once per container: a deploy brings new code, hence new containers. */
let synced: Promise<unknown> | undefined;

/** EventBridge Scheduler, every minute: the leader enqueues every due fire. */
export const handler = async (_event: unknown, context: Context) => {
  synced ??= syncDeclaredSchedules(engine.store, engine.app.schedules, engine.clock.now());
  await synced.catch((err) => {
    synced = undefined;
    throw err;
  });
  const report = await runCronTick({ engine, owner: context.awsRequestId, tickMs });
  engine.metrics.flush();
  logger.info("cron ran", { report });
  return report;
};
