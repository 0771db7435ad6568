import { tierOf } from "../declarations/queue-declaration.ts";
import type { PoolRunnerOptions } from "../pool/pool-options.ts";
import { PoolRunner } from "../pool/pool-runner.ts";
import type { Engine } from "../services/engine-services.ts";

/** What the pool process sets beyond the engine (PoolRunnerOptions says what each means). */
export type PoolSettings = Pick<PoolRunnerOptions, "baseEnv" | "cwd" | "waitSeconds" | "childUsers">;

/** The pool runner for the pool kinds in force and the pool-tier queues they serve. */
export function poolRunner(engine: Engine, settings: PoolSettings): PoolRunner {
  const kinds = engine.poolKinds;
  const served = new Set(kinds.map((k) => k.queue));
  const queues = engine.queues.filter((q) => tierOf(q) === "pool" && served.has(q.name));
  return new PoolRunner(engine, { kinds, queues, ...settings });
}
