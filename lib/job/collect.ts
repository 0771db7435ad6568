import type * as z from "zod";
import { UsageError } from "../errors.ts";
import type { CollectKindInput, JobContext, KindDefinition } from "./kind.ts";

/**
 * Collect kinds (docs/architecture.md §19): a debounce whose one run gets every payload of its
 * burst, in enqueue order, and answers one result per payload.
 */

/** A collect handler: every payload of the burst, in enqueue order; one result per payload. */
export type CollectHandler<P, R> = (payloads: P[], ctx: JobContext) => Promise<readonly R[]>;

/**
 * The kind a collect declaration stands for: the runtime calls its handler with the burst's
 * payloads (lib/runtime/precheck.ts), and the job's result is the list of results.
 */
export function collectKindDefinition<S extends z.ZodType, R, const N extends string, const Q extends string>(
  def: CollectKindInput<S, R, N, Q, JobContext>,
): KindDefinition<S, readonly R[], N, Q> {
  const { debounce, handler, ...kind } = def;
  return {
    ...kind,
    debounce: { ...debounce, mode: "collect" },
    handler: collectHandler(handler) as KindDefinition<S, readonly R[], N, Q>["handler"],
  };
}

/**
 * A collect handler, checked: a handler that answers for more or fewer payloads fails the attempt,
 * since its results can no longer be matched to the enqueues.
 */
export function collectHandler<P, R>(handler: CollectHandler<P, R>): KindDefinition["handler"] {
  return async (payloads: unknown, ctx: JobContext) => {
    const items = payloads as P[];
    const results: unknown = await handler(items, ctx);
    if (!Array.isArray(results))
      throw new UsageError(`the collect handler returned ${typeof results}, not one result per payload`);
    if (results.length !== items.length)
      throw new UsageError(
        `the collect handler returned ${results.length} results for ${items.length} payloads`,
      );
    return results;
  };
}
