import { readFileSync } from "node:fs";
import { app } from "../app/index.ts";
import { loadPoolKinds } from "../lib/declarations/pool-config.ts";

/**
 * The operator's pool kinds file, read at deploy time from SKYFORGE_POOL_CONFIG (a path relative to
 * the repo root). Keep it under children/: the image copies that folder, and the API and enqueue
 * functions get the same file, so producers accept the kinds it adds. A bad file fails the deploy.
 */
const path = process.env.SKYFORGE_POOL_CONFIG;
if (path && !/^(\.\/)?children\/[^/].*\.json$/.test(path)) {
  throw new Error(
    `SKYFORGE_POOL_CONFIG must name a .json file under children/ (the image copies only that folder), got "${path}"`,
  );
}

export const poolKinds = loadPoolKinds(app.queues, app.poolKinds, path, (p) => readFileSync(p, "utf8"));
export const poolConfigEnv: Record<string, string> = path ? { SKYFORGE_POOL_CONFIG: path } : {};
export const poolConfigFiles = path ? [{ from: path }] : [];
