import type { PoolKindSpec } from "../lib/declarations/pool-kind.ts";
import type { QueueDeclaration } from "../lib/declarations/queue-declaration.ts";
import type { ApiThrottlePlan } from "../lib/deploy-plan/api-throttle.ts";
import type { LambdaFunction } from "./entries.ts";

/**
 * What a Skyforge component was built from, left where the offline deploy proof finds it
 * (scripts/deploy/sst-program.ts reads the list when the program ends): the proof checks each
 * component's resources against its own app's declarations, in any project. A deploy never reads it.
 */
export interface ComponentReport {
  name: string;
  /** The app module's absolute path. */
  app: string;
  handlers: Record<LambdaFunction, string>;
  /**
   * The logical names of the SST components it created. SST creates some resources without a
   * parent, named after the component that spawned them (an API's routes, a queue's subscriber).
   */
  children: string[];
  queues: readonly QueueDeclaration[];
  poolKinds: readonly PoolKindSpec[];
  /** The API's throttles and the token callback's reserved concurrency, as planned. */
  throttle: ApiThrottlePlan;
  /** The pool's image and its most tasks, when the app declares pool kinds. */
  poolImage?: { context: string; dockerfile: string };
  poolMaxTasks?: number;
  /** Realtime's topic prefix (lib/deploy-plan/realtime-plan.ts): every topic its roles may publish to starts with it. */
  realtimePrefix: string;
}

export const COMPONENT_REPORTS = Symbol.for("skyforge.components");

/** The component's Pulumi type: what SST's link shows as its `type` (skyforge.aws.Skyforge). */
export const SKYFORGE_TYPE = "skyforge:aws:Skyforge";

export function describeComponent(report: ComponentReport): void {
  const global = globalThis as { [COMPONENT_REPORTS]?: ComponentReport[] };
  global[COMPONENT_REPORTS] ??= [];
  global[COMPONENT_REPORTS].push(report);
}
