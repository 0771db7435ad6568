import { ClientError, internalErrorBody } from "../errors.ts";
import type { BatchResultItem } from "../job/schemas.ts";

/** A batch item's error as the API answers it: the caller's mistake as is, anything else a generic retry. */
export function errorBody(err: unknown): NonNullable<BatchResultItem["error"]> {
  if (err instanceof ClientError) return err.toBody().error;
  return internalErrorBody("could not enqueue; retry").error;
}
