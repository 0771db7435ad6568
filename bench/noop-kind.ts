import * as z from "zod";
import { defineUnboundKind } from "../lib/job/kind.ts";

/**
 * A handler that does nothing and returns nothing: what `--matrix` runs by default, so each cell
 * prices skyforge's own requests for the payload, not a result as large as it (an echo stores one).
 */
export const NOOP_KIND = "bench-noop";
export const noopKind = defineUnboundKind({
  name: NOOP_KIND,
  payload: z.json(),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async () => null,
});
