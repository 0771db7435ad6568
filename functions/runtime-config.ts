import { app } from "../app/index.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import { poolKindsFromEnv as poolKindsOf } from "./engine-config.ts";
import type { Env } from "./env-settings.ts";

/**
 * This repository's own app bound to the settings `npm start` reads (scripts/start.ts). Nothing a
 * deployed function imports: a Lambda bundle's entry gives functions/handlers.ts the app it was
 * generated for, so it holds that app and not this repo's demo kinds. The readers themselves are
 * app-free: env-settings.ts and engine-config.ts.
 */
export { type LocalStackSettings, localStackSettingsFromEnv } from "./env-settings.ts";

/** The demo app's pool kinds, with the operator's SKYFORGE_POOL_CONFIG file laid over them. */
export function poolKindsFromEnv(env: Env = process.env): PoolKindSpec[] {
  return poolKindsOf(app, env);
}
