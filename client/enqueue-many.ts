import { type ErrorCode, errorCodes } from "../lib/errors.ts";
import { MAX_BATCH } from "../lib/job/schemas.ts";
import { describeError, SkyforgeApiError, SkyforgeTransportError } from "./errors.ts";
import type { EnqueueManyError, EnqueueManyResult } from "./skyforge-client.ts";
import type { EnqueueCheck } from "./validate.ts";

/**
 * A batch request's body stays under this, so that its API Gateway event fits Lambda's 6 MB payload
 * even when escaping a JSON body inside the event's JSON doubles it. Small jobs go 100 per request
 * (MAX_BATCH); jobs with large payloads go fewer at a time.
 */
export const MAX_BATCH_BODY_BYTES = 2_500_000;

interface Pending {
  /** The job's place in the caller's list. */
  index: number;
  job: unknown;
  bytes: number;
}

/** Requests of at most MAX_BATCH jobs and MAX_BATCH_BODY_BYTES each (a larger job goes alone), in order. */
export function batchesOf<T extends { bytes: number }>(items: readonly T[]): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (current.length > 0 && (current.length === MAX_BATCH || bytes + item.bytes > MAX_BATCH_BODY_BYTES)) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += item.bytes + 1;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * Any number of jobs through POST /jobs/batch, one result per job with `index` in the caller's
 * numbering. A job the client's check refuses is not sent and carries its error. A request that
 * fails as a whole gives each of its jobs that request's error (batchFailure), and the next
 * requests still go.
 */
export async function enqueueInBatches(
  jobs: readonly unknown[],
  sendBatch: (jobs: unknown[]) => Promise<unknown>,
  check: EnqueueCheck | undefined,
): Promise<EnqueueManyResult[]> {
  const results: EnqueueManyResult[] = new Array(jobs.length);
  const pending: Pending[] = [];
  for (const [index, job] of jobs.entries()) {
    const refused = await check?.(job);
    if (refused) results[index] = { index, error: refused.toBody() };
    else pending.push({ index, job, bytes: Buffer.byteLength(JSON.stringify(job) ?? "") });
  }

  for (const batch of batchesOf(pending)) {
    try {
      const answer = await sendBatch(batch.map((p) => p.job));
      const items = (answer as { results?: unknown } | undefined)?.results;
      if (!Array.isArray(items)) {
        throw new SkyforgeTransportError(`POST /jobs/batch answered without results`, {
          status: 200,
          body: answer,
        });
      }
      for (const item of items as EnqueueManyResult[]) {
        const sent = batch[item.index];
        if (sent) results[sent.index] = { ...item, index: sent.index };
      }
      for (const sent of batch) {
        results[sent.index] ??= {
          index: sent.index,
          error: {
            code: "internal",
            message: `the API answered no result for this job, so it may or may not be queued; ${RESEND}`,
            unanswered: true,
          },
        };
      }
    } catch (err) {
      if (!(err instanceof SkyforgeApiError || err instanceof SkyforgeTransportError)) throw err;
      const error = batchFailure(err);
      for (const sent of batch) results[sent.index] = { index: sent.index, error };
    }
  }
  return results;
}

const RESEND = "send it again with a uniqueKey to be sure it runs once";

/**
 * What a batch request that failed as a whole tells of its jobs, by the status that came back:
 * - a 4xx, the API's or something's in front of it (API Gateway's 403, 413, 429; Lambda refusing the
 *   Invoke): the request was refused before any job of it was queued. The API's own error is kept;
 *   another gets the code of its status when the API has one (else `internal`).
 * - a 5xx, a Lambda function error, an answer without results, or no answer at all (no connection,
 *   a timeout): the request may have queued some of its jobs before it failed. `internal`, marked
 *   `unanswered`, and the message says to resend with a uniqueKey.
 */
export function batchFailure(err: SkyforgeApiError | SkyforgeTransportError): EnqueueManyError {
  const status = err instanceof SkyforgeApiError ? err.status : err.answer?.status;
  if (status !== undefined && status >= 400 && status < 500) {
    const refused = `not queued: the request carrying this job was refused`;
    if (err instanceof SkyforgeApiError) return { ...err.toBody(), message: `${refused}: ${err.message}` };
    const answer = err.message.includes(`HTTP ${status}`) ? "" : ` (HTTP ${status})`;
    return { code: codeOfStatus(status), message: `${refused}${answer}: ${err.message}` };
  }
  return {
    code: "internal",
    message: `the request carrying this job failed, so it may or may not be queued: ${describeError(err)}; ${RESEND}`,
    unanswered: true,
  };
}

/** Codes that name one cause the API itself found: a bare status (API Gateway's 429 throttle) is none of them. */
const ONLY_FROM_THE_API: ReadonlySet<ErrorCode> = new Set(["key_backlog_full"]);

function codeOfStatus(status: number): ErrorCode {
  const found = Object.entries(errorCodes).find(
    ([code, s]) => s === status && !ONLY_FROM_THE_API.has(code as ErrorCode),
  );
  return (found?.[0] as ErrorCode | undefined) ?? "internal";
}
