import { ClientError, InvalidItemState, InvalidStoreInput, ItemNotFound } from "../errors.ts";

/**
 * The client error a failure stands for, or undefined when it is ours (answered `internal`). The
 * store speaks of items and states; this is where they become codes a caller can act on.
 */
export function asClientError(err: unknown): ClientError | undefined {
  if (err instanceof ClientError) return err;
  if (err instanceof ItemNotFound) return new ClientError("not_found", err.message);
  if (err instanceof InvalidItemState) return new ClientError("conflict", err.message);
  if (err instanceof InvalidStoreInput) return new ClientError("validation_error", err.message);
  return undefined;
}
