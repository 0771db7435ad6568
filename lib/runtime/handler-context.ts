import { ClientError, type ClientErrorCode, ConfigError, UnrecoverableError, UsageError } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import type { DurableContext } from "../job/durable.ts";
import type { CompletionContext, FollowUpOptions, JobContext } from "../job/kind.ts";
import { raceBranches } from "../job/race.ts";
import { jobFields, type Log, withFields } from "../observability/log.ts";
import type { Engine } from "../services/engine-services.ts";
import type { JobItem } from "../store/job-item.ts";

export type HandlerContextDeps = Pick<Engine, "producer" | "groups" | "log" | "registry"> &
  Partial<Pick<Engine, "rateLimiter" | "realtime">>;

/**
 * The follow-up's default uniqueKey: one per (parent job, step), kept after the follow-up finished,
 * so however often the parent's run is retried it enqueues the step once (docs/architecture.md §12).
 */
export function followUpKey(parentId: string, step: string): string {
  return `follow:${parentId}:${step}`;
}

/** A follow-up the producer refuses for its content will be refused on every retry: the run can't succeed. */
const REFUSED_FOR_GOOD: ReadonlySet<ClientErrorCode> = new Set([
  "validation_error",
  "unknown_kind",
  "payload_too_large",
]);

/** A request the producer refuses for its content fails the run for good: no retry could fix it. */
export async function refusalIsFinal<T>(what: string, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof ClientError && REFUSED_FOR_GOOD.has(err.code)) {
      throw new UnrecoverableError(`${what} refused: ${err.message}`);
    }
    throw err;
  }
}

/** A handler's `rateLimit`: the engine's limiter; a worker built without one can't serve it. */
export function rateLimitOf(deps: Partial<Pick<Engine, "rateLimiter">>): JobContext["rateLimit"] {
  return (scope, take) => {
    if (!deps.rateLimiter) throw new ConfigError("no rate limiter is configured for this worker");
    return deps.rateLimiter.acquire(scope, take);
  };
}

/**
 * The durable calls of a run that can't record steps: a lane without a claim (no fence to record
 * under) or a batch call (one call for many jobs). Each fails the attempt naming why.
 */
export function durableUnavailable(why: string): DurableContext {
  const refuse = (): never => {
    throw new UsageError(`durable steps, sleeps and waits need a claimed single-job run: ${why}`);
  };
  return {
    step: async () => refuse(),
    sleep: async () => refuse(),
    sleepUntil: async () => refuse(),
    createToken: async () => refuse(),
    waitForToken: async () => refuse(),
    waitForEvent: async () => refuse(),
    // Building a branch records nothing; the race itself is refused.
    ...raceBranches,
    waitForAny: async () => refuse(),
    invoke: async () => refuse(),
    invokeMany: async () => refuse(),
    version: async () => refuse(),
    parallel: async () => refuse(),
    map: async () => refuse(),
  };
}

/**
 * The context one run's handler sees; the signal is added by the run supervisor. `fence`: the
 * claim's lease token, absent for a lane without a claim (and then absent from the context too).
 * `item.trace`: the run's own span context, so follow-ups and groups are spans under the attempt.
 */
export function handlerContext(
  deps: HandlerContextDeps,
  item: JobItem,
  fence: string | undefined,
  heartbeat: () => Promise<void>,
  completion?: CompletionContext,
  durable: DurableContext = durableUnavailable("this lane runs without a claim"),
): Omit<JobContext, "signal"> {
  const log: Log = withFields(deps.log, jobFields(item, item.attempts));
  return {
    job: {
      id: item.id,
      kind: item.kind,
      queue: item.queue,
      maxAttempts: item.maxAttempts,
      createdAt: new Date(item.createdAt).toISOString(),
    },
    attempt: item.attempts,
    ...(fence === undefined ? {} : { fence }),
    ...durable,
    log,
    heartbeat,
    rateLimit: rateLimitOf(deps),
    stream: (name) => {
      if (!deps.realtime) throw new ConfigError("no realtime service is configured for this worker");
      return deps.realtime.stream(item, name);
    },
    ...(completion ? { completion } : {}),
    group: (spec) => refusalIsFinal("group", () => deps.groups.createFromJob(item, fence, spec)),
    enqueue: async (kind, payload, options: FollowUpOptions = {}) => {
      const { step = kind, uniqueKey, ...rest } = options;
      // A caller's own key keeps the API's rule (dedupes while live); the derived one dedupes for good.
      // A debounced or singleton kind takes none: its own key's rule decides (docs/architecture.md §19).
      const target = deps.registry.get(kind);
      const derived = target && coalesceRuleOf(target) ? undefined : followUpKey(item.id, step);
      const key = uniqueKey ?? derived;
      // A follow-up carries its parent's tags unless it gives its own (docs/guide/finding-runs.md).
      const tags = rest.tags ?? item.tags;
      const request = {
        ...rest,
        kind,
        payload,
        ...(key !== undefined ? { uniqueKey: key } : {}),
        ...(tags?.length ? { tags } : {}),
      };
      return refusalIsFinal(`follow-up "${kind}"`, () =>
        deps.producer.enqueue(request, {
          uniqueKeyScope: uniqueKey ? "live" : "retained",
          ...(item.trace ? { job: { trace: item.trace } } : {}),
        }),
      );
    },
  };
}
