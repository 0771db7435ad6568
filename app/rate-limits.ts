import { defineRateLimits } from "../lib/declarations/define-app.ts";

/** Cluster-wide token buckets a handler takes from with `ctx.rateLimit(scope)`. Adding one is one entry here. */
export const rateLimits = defineRateLimits([{ scope: "partner-api", capacity: 5, refillPerSecond: 2 }]);
