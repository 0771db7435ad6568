import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { App } from "../lib/declarations/define-app.ts";
import { loadPoolKinds } from "../lib/declarations/pool-config.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";

/**
 * The operator's pool kinds file (the component's `pool.config`, a path relative to the project
 * root), read at deploy time. Keep it under children/: the image copies that folder, and the API
 * and enqueue functions get the same file, so producers accept the kinds it adds. A bad file fails
 * the deploy before anything is planned.
 */
export function resolvePoolKinds(root: string, app: App, config: string | undefined): PoolKindSpec[] {
  if (config !== undefined && !/^(\.\/)?children\/[^/].*\.json$/.test(config)) {
    throw new Error(
      `pool.config must name a .json file under children/ (the image copies only that folder), got "${config}"`,
    );
  }
  return loadPoolKinds(app.queues, app.poolKinds, config, (p) => readFileSync(join(root, p), "utf8"));
}
