import { handleEnqueueInvoke } from "../api/invoke.ts";
import type { Engine } from "../services/engine-services.ts";

/** Direct invoke: an EnqueueRequest or { jobs: [...] } (≤ 100). */
export function enqueueHandler(engine: Engine) {
  return (event: unknown) => handleEnqueueInvoke(engine, event);
}
