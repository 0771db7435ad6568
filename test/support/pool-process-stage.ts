import { app } from "../../app/index.ts";
import type { Log } from "../../lib/observability/log.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { CLAIMS_BUCKET, type Emulators } from "../../local/emulators.ts";
import type { PoolProcessOptions } from "../../local/pool-process.ts";
import { appEngine } from "./app-engine.ts";
import { engineWiring, freshResources } from "./test-emulators.ts";
import { waitFor } from "./wait.ts";

/** What startPoolProcess needs to reach a stage's table and queues. */
export type PoolProcessTarget = Pick<PoolProcessOptions, "endpoints" | "table" | "queueUrls" | "dlqUrls">;

/**
 * The app's queues and a table no other test uses, for a real pool process (functions/pool/main.ts)
 * to serve, with the app's engine on them to enqueue and read jobs.
 */
export interface PoolProcessStage {
  engine: Engine;
  /** The app's engine on the same table and queues under another operator's pool file. */
  engineFor(poolConfigText: string): Engine;
  target: PoolProcessTarget;
  /** Destroys the stage's clients (the table and queues go with the file's emulators). */
  destroy(): void;
}

/**
 * A stage on the file's emulators; `poolConfigText` is the operator's pool file the process is given,
 * so the engine resolves the same pool kinds. The bucket is CLAIMS_BUCKET: the only one the process knows.
 */
export async function poolProcessStage(
  emu: Emulators,
  name: string,
  poolConfigText?: string,
): Promise<PoolProcessStage> {
  const fresh = await freshResources(
    emu,
    app.queues,
    { table: name, queues: name, bucket: name },
    { claimsBucket: CLAIMS_BUCKET },
  );
  const { table, queueUrls, dlqUrls } = engineWiring(fresh);
  const engineFor = (text?: string) => appEngine(fresh, table, fresh.queues, text);
  return {
    engine: engineFor(poolConfigText),
    engineFor,
    target: {
      endpoints: { dynamodb: emu.dynamodb.endpoint, sqs: emu.sqs.endpoint },
      table,
      queueUrls,
      dlqUrls,
    },
    destroy: fresh.destroy,
  };
}

/** Every line a pool process and its supervisor log: the pool's own lines as they are, the rest with their fields. */
export function poolOutputLog(): { lines: string[]; log: Log } {
  const lines: string[] = [];
  const keep = (m: string, a?: Record<string, unknown>) =>
    lines.push(m === "pool" ? String(a?.line) : `${m} ${JSON.stringify(a ?? {})}`);
  const log: Log = { debug: () => {}, info: keep, warn: keep, error: keep };
  return { lines, log };
}

/** What the pool logs when it refuses its configuration, and then exits 78. */
export const REFUSED_CONFIGURATION = "the pool refused its configuration";

/** Waits until the pool's output says it refused its configuration; the line that says so. */
export function refusal(lines: readonly string[], what: string): Promise<string> {
  return waitFor(async () => lines.find((l) => l.includes(REFUSED_CONFIGURATION)), what, 30_000);
}
