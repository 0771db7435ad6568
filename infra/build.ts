import type { App } from "../lib/declarations/define-app.ts";
import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import type { ApiThrottlePlan } from "../lib/deploy-plan/api-throttle.ts";
import type { LambdaFunction } from "./entries.ts";
import type { SkyforgeArgs } from "./skyforge-args.ts";

/**
 * What every part of one Skyforge component is built from (infra/skyforge.ts makes it): the
 * component's name, which starts every child's logical name (two components in a stage never share
 * a resource name), the app's declarations as checked, and the generated entries' handlers.
 */
export interface Build {
  name: string;
  /** The component: the parent of every resource it creates. */
  parent: $util.Resource;
  app: App;
  /** The pool kinds in force: the app's, with `pool.config`'s laid over them. */
  poolKinds: readonly PoolKindSpec[];
  /** `pool.config`, when given: its path relative to the project root. */
  poolConfig: string | undefined;
  /** Each Lambda function's handler: its generated entry (infra/entries.ts). */
  handlers: Record<LambdaFunction, string>;
  /** The pool task's generated entry, for `sst dev`'s local pool. */
  poolEntry: string;
  /** The API's throttles and the token callback's reserved concurrency: `throttle` over the defaults. */
  throttle: ApiThrottlePlan;
  args: SkyforgeArgs;
}

/** A child's logical name: the component's name, then the part's. */
export function childName(build: Build, part: string): string {
  return `${build.name}${part}`;
}

/** The options every child is created with. */
export function childOpts(build: Build): $util.ComponentResourceOptions {
  return { parent: build.parent };
}

/** `pool.config` as what the functions that enqueue are given: its path, and the file in their bundle. */
export function poolConfigEnv(build: Build): Record<string, string> {
  return build.poolConfig ? { SKYFORGE_POOL_CONFIG: build.poolConfig } : {};
}

export function poolConfigFiles(build: Build): { from: string }[] {
  return build.poolConfig ? [{ from: build.poolConfig }] : [];
}
