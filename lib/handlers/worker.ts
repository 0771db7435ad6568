import { ConfigError } from "../errors.ts";
import { createWorker } from "../runtime/worker.ts";
import type { Engine } from "../services/engine-services.ts";

/** The SQS worker of one declared queue; a ConfigError for a queue the app doesn't declare. */
export function queueWorker(engine: Engine, queueName: string) {
  const declaration = engine.queues.find((q) => q.name === queueName);
  if (!declaration) throw new ConfigError(`no queue named "${queueName}" is declared`);
  return createWorker(engine, { recordConcurrency: declaration.recordConcurrency });
}
