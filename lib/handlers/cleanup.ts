import { Cleanup, type CleanupReport } from "../ops/cleanup.ts";
import type { Engine } from "../services/engine-services.ts";
import type { HandlerSettings } from "./handler-settings.ts";

/** Retention cleanup; the sweep resumes where the previous run of this process stopped. */
export function cleanupHandler(engine: Engine, settings: HandlerSettings): () => Promise<CleanupReport> {
  const cleanup = new Cleanup(engine, { sweepItemsPerRun: settings.cleanupSweepItemsPerRun });
  return () => cleanup.run();
}
