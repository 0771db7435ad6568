import { type ReaperReport, runReaper } from "../ops/reaper.ts";
import type { Engine } from "../services/engine-services.ts";
import type { HandlerSettings } from "./handler-settings.ts";

/** Promotes due jobs, drains the dead-letter queues and sweeps stale messages, one tick's worth. */
export function reaperHandler(engine: Engine, settings: HandlerSettings): () => Promise<ReaperReport> {
  return () => runReaper(engine, { tickMs: settings.tickMs });
}
