import type { JobView } from "../job/schemas.ts";
import { viewFields } from "./job-field-copies.ts";
import type { JobItem } from "./job-fields.ts";
import { checkFormat } from "./stored-formats.ts";

/**
 * The job item and a claim's seed: types derived from the map of a job's fields
 * (lib/store/job-fields.ts), where each field is declared with where it is kept. A payload over
 * INLINE_PAYLOAD_BYTES lives in its own immutable item (`payloadRef`), and a payload or result over
 * the claim check's threshold in the claims bucket (`payloadObject`, `resultObject`: lib/claims/).
 */
export type { JobItem, JobSeed } from "./job-fields.ts";

/** A success's result as the store records it: its JSON in the item, or the key of its claims object. */
export type StoredResult = { json: string } | { object: string };

/** The item attribute a stored result becomes. */
export const resultFields = (r: StoredResult): Pick<JobItem, "result" | "resultObject"> =>
  "json" in r ? { result: r.json } : { resultObject: r.object };

/** Payloads at or under this size stay inline; larger ones go to a separate immutable item. */
export const INLINE_PAYLOAD_BYTES = 400;

/** The public view of a job, given its payload and result JSON (loaded when stored elsewhere). */
export function toJobView(
  item: JobItem,
  payloadJson: string | undefined = item.payload,
  resultJson: string | undefined = item.result,
): JobView {
  checkFormat("job", item, `job ${item.id}`);
  return {
    ...viewFields(item),
    payload: payloadJson === undefined ? null : JSON.parse(payloadJson),
    ...(resultJson !== undefined ? { result: JSON.parse(resultJson) } : {}),
  };
}
