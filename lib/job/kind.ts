import type { z } from "zod";
import type { RateLimitAnswer } from "../rate-limit/rate-limiter.ts";
import type { JobView } from "./schemas.ts";

export interface Fence {
  attempt: number;
  token: string;
}

/** What a handler sees. `signal` aborts on cancel, lost lease or timeout. */
export interface JobContext {
  job: Pick<JobView, "id" | "kind" | "queue" | "attempts" | "maxAttempts" | "createdAt">;
  attempt: number;
  fence: Fence;
  signal: AbortSignal;
  /** Renew the lease now (the runtime also does this on a timer). */
  heartbeat(): Promise<void>;
  /**
   * Take `n` tokens (default 1) from a cluster-wide bucket declared in lib/rate-limit/scopes.ts.
   * A denial says how long to wait; throw ThrottledError(waitMs / 1000) to cool the whole queue
   * down without spending the attempt.
   */
  rateLimit(scope: string, n?: number): Promise<RateLimitAnswer>;
}

export interface BackoffPolicy {
  baseSeconds: number;
  maxSeconds: number;
}

export interface KindDefinition<P = unknown, R = unknown> {
  name: string;
  payload: z.ZodType<P>;
  handler: (payload: P, ctx: JobContext) => Promise<R>;
  queue: string;
  maxAttempts: number;
  timeoutSeconds: number;
  /** Overrides the queue's backoff for this kind. */
  backoff?: BackoffPolicy;
}

/** Typed constructor: the payload type flows from the schema into the handler. */
export function defineKind<S extends z.ZodType, R>(
  def: Omit<KindDefinition<z.infer<S>, R>, "payload"> & { payload: S },
): KindDefinition<z.infer<S>, R> {
  return def as KindDefinition<z.infer<S>, R>;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds kinds of every payload type; each is checked by its own schema at the edge.
export type AnyKind = KindDefinition<any, unknown>;
