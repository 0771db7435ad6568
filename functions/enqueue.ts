import { enqueueHandler } from "../lib/handlers/enqueue.ts";
import { engineFromEnv } from "./runtime-config.ts";

const { engine } = engineFromEnv("skyforge-enqueue");
const enqueue = enqueueHandler(engine);

/** Direct invoke: an EnqueueRequest or { jobs: [...] } (≤ 100). */
export const handler = async (event: unknown) => {
  try {
    return await enqueue(event);
  } finally {
    engine.metrics.flush();
  }
};
