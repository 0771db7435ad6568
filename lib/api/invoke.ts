import { ClientError, type ErrorBody } from "../errors.ts";
import type { BatchResultItem, JobView } from "../job/schemas.ts";
import { MAX_BATCH } from "../job/schemas.ts";
import type { Engine } from "../services/engine-services.ts";
import { asClientError } from "./client-errors.ts";

export type InvokeAnswer = (JobView & { duplicate: boolean }) | { results: BatchResultItem[] } | ErrorBody;

/**
 * The enqueue function's contract: an EnqueueRequest or `{ jobs: [...] }` (≤ 100), answered like
 * the HTTP routes. A caller's mistake comes back as `{ error }`, not as a function error.
 */
export async function handleEnqueueInvoke(engine: Engine, event: unknown): Promise<InvokeAnswer> {
  try {
    if (event && typeof event === "object" && "jobs" in event) {
      const jobs = (event as { jobs: unknown }).jobs;
      if (!Array.isArray(jobs) || jobs.length === 0 || jobs.length > MAX_BATCH) {
        throw new ClientError("validation_error", `jobs must be an array of 1..${MAX_BATCH} requests`);
      }
      return { results: await engine.producer.enqueueBatch(jobs) };
    }
    const { job, duplicate } = await engine.producer.enqueue(event);
    return { ...job, duplicate };
  } catch (err) {
    const client = asClientError(err);
    if (client) return client.toBody();
    throw err;
  }
}
