import { type CronTickReport, runCronTick } from "../ops/cron-tick.ts";
import { type SyncReport, syncDeclaredSchedules } from "../ops/sync-schedules.ts";
import type { Engine } from "../services/engine-services.ts";
import type { HandlerSettings } from "./handler-settings.ts";

/**
 * The cron tick, and the sync of the app's declared schedules it depends on: once per process (a
 * Lambda container, which a deploy replaces with the new code; the local stack), by whichever asks
 * first, `syncDeclared()` or the first tick. A failed sync is tried again by the next ask.
 */
export class CronHandler {
  private synced: Promise<SyncReport> | undefined;

  private readonly engine: Engine;
  private readonly settings: HandlerSettings;

  constructor(engine: Engine, settings: HandlerSettings) {
    this.engine = engine;
    this.settings = settings;
  }

  syncDeclared(): Promise<SyncReport> {
    const { store, app, clock, log } = this.engine;
    this.synced ??= syncDeclaredSchedules(store, app.schedules, clock.now(), log);
    return this.synced.catch((err) => {
      this.synced = undefined;
      throw err;
    });
  }

  /** One tick; `owner` names this run for the cron lease (the Lambda request id on AWS). */
  async run(owner: string): Promise<CronTickReport> {
    await this.syncDeclared();
    return runCronTick({ engine: this.engine, owner, tickMs: this.settings.tickMs });
  }
}
