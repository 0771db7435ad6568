import { keptDays } from "../claims/claim-keys.ts";
import type { ClaimStore } from "../claims/claim-store.ts";
import { loadDurable } from "../claims/durable-bodies.ts";
import { UnrecoverableError } from "../errors.ts";
import type { StoredBody } from "../services/suspension.ts";
import type { StepRecord } from "../store/step-record.ts";

/**
 * A record's body. An object gone from the claims bucket (the job waited or ran longer than its
 * class: an operator's retention, a job paused for months) ends the job dead, naming the step:
 * replaying its result as nothing would take the handler down another path.
 */
export async function readRecorded(
  claims: ClaimStore,
  jobId: string,
  name: string,
  record: StepRecord,
): Promise<unknown> {
  const json = await loadDurable(claims, jobId, record);
  if (json === undefined && record.o !== undefined)
    throw new UnrecoverableError(
      `step "${name}": its ${record.event !== undefined ? "event's data" : "result"} has expired (kept ${keptDays(record.o)} days): the job waited or ran longer than its queue keeps it`,
    );
  return json === undefined ? undefined : JSON.parse(json);
}

/** A job's recorded bodies in the claims bucket, as one run knows its records. */
export function storedBodiesOf(steps: Record<string, StepRecord>): StoredBody[] {
  return Object.entries(steps).flatMap(([name, r]) => (r.o !== undefined ? [{ name, o: r.o, t: r.t }] : []));
}
