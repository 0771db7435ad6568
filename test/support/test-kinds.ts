import * as z from "zod";
import type { JobContext, KindDefinition } from "../../lib/job/kind.ts";

/** What a test's kind sets beyond its name and handler: the limits it relies on, a payload schema if any. */
export type TestKindSpec<S extends z.ZodType> = Pick<
  KindDefinition,
  "maxAttempts" | "timeoutSeconds" | "backoff" | "lane" | "startWithinSeconds" | "onExhausted"
> & { payload?: S };

const EMPTY = z.object({});

/**
 * A test's own kind on the test app's default queue, with the handler whose runs the test watches.
 * Without a payload schema the payload is an empty object.
 */
export function kindOnDefaultQueue<R, S extends z.ZodType = typeof EMPTY>(
  name: string,
  { payload, ...limits }: TestKindSpec<S>,
  handler: (payload: z.output<S>, ctx: JobContext) => Promise<R>,
): KindDefinition<S, R> {
  return { name, queue: "default", payload: (payload ?? EMPTY) as S, ...limits, handler };
}
