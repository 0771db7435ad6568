import { handleEnqueueInvoke } from "../lib/api/invoke.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine } = engineFromEnv("skyforge-enqueue");

/** Direct invoke: an EnqueueRequest or { jobs: [...] } (≤ 100). */
export const handler = async (event: unknown) => {
  try {
    return await handleEnqueueInvoke(engine, event);
  } finally {
    engine.metrics.flush();
  }
};
