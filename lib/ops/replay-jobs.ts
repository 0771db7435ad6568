import pLimit from "p-limit";
import { loadPayload } from "../claims/job-bodies.ts";
import { ClientError, type ClientIssue, issuesOf } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import { MAX_REPLAY, type ReplayAnswer, ReplayRequest } from "../job/replay-schemas.ts";
import { kindsReadyFor, validateEnqueue } from "../producer/validate.ts";
import type { Engine } from "../services/engine-services.ts";
import type { JobItem } from "../store/job-item.ts";
import { matchingJobs, REPLAY_BUDGET, type ReplayBudget } from "./replay-matching.ts";

type ReplayDeps = Pick<Engine, "store" | "claims" | "producer" | "registry" | "queues">;
/**
 * A replay ready to enqueue: the job it runs again, and its request. A payload of its own over
 * KEPT_PAYLOAD_BYTES is left out of the request (`reread`) and read again to enqueue.
 */
type Checked = { from: string; request: Record<string, unknown>; reread?: JobItem };

/**
 * A payload this size or less is kept from its check to its enqueue; a larger one (up to 1 MiB, in
 * the claims bucket) is read again to enqueue, so a request holds at most PARALLEL of them at once
 * rather than all of its jobs' payloads.
 */
const KEPT_PAYLOAD_BYTES = 8 * 1024;
/** Payload reads and enqueues a request runs at once. */
const PARALLEL = 8;

/**
 * POST /jobs/replay (docs/architecture.md §21): the ended jobs a filter matches, run again as new
 * jobs that name the job they replay (`replayOf`); the originals are untouched. One request does
 * bounded work: at most `limit` (≤ MAX_REPLAY) matches and REPLAY_BUDGET's list pages, answering a
 * `cursor` when more may match (lib/ops/replay-matching.ts). Every new request of the answer is
 * checked before any is enqueued, so an override the kind refuses replays nothing. A request that
 * enqueues needs a `requestId`: each new job's unique key is `replay-<requestId>-<original id>`,
 * kept after it ends, so the same request again (a retry after a timeout, or the same cursor)
 * answers the same jobs and never matches the jobs it made (a debounced or singleton kind takes no
 * unique key, so it isn't deduped). `filter.ids` names the jobs to look at (at most 100, each read
 * by id) instead of listing them.
 */
export async function replayJobs(
  deps: ReplayDeps,
  raw: unknown,
  budget: ReplayBudget = REPLAY_BUDGET,
): Promise<ReplayAnswer> {
  const parsed = ReplayRequest.safeParse(raw);
  if (!parsed.success)
    throw new ClientError("validation_error", "invalid replay request", issuesOf(parsed.error));
  const request = parsed.data;
  const { filter, overrides = {} } = request;
  if (filter.kind !== undefined && !deps.registry.has(filter.kind))
    throw new ClientError("unknown_kind", `unknown kind "${filter.kind}"`, [
      { path: "filter.kind", message: "not a kind of this app" },
    ]);
  for (const [path, queue] of [
    ["filter.queue", filter.queue],
    ["overrides.queue", overrides.queue],
  ] as const)
    if (queue !== undefined && !deps.queues.some((q) => q.name === queue))
      throw new ClientError("validation_error", `unknown queue "${queue}"`, [
        { path, message: "not declared" },
      ]);
  const { jobs: matches, cursor } = await matchingJobs(deps, request, request.limit ?? MAX_REPLAY, budget);
  const more = cursor !== undefined ? { cursor } : {};
  if (request.dryRun)
    return { matched: matches.length, replayed: 0, jobs: matches.map((j) => ({ from: j.id })), ...more };
  const parallel = pLimit(PARALLEL);
  const checked = await Promise.all(matches.map((job) => parallel(() => checkedReplay(deps, request, job))));
  const issues = checked.flatMap((c) => ("issues" in c ? c.issues : []));
  if (issues.length > 0)
    throw new ClientError(
      "validation_error",
      "some replays would be refused; nothing was replayed",
      issues.slice(0, 20),
    );
  const ready = checked.filter((c): c is Checked => "request" in c);
  const jobs = await Promise.all(
    ready.map((c) =>
      parallel(async () => {
        const { job } = await deps.producer.enqueue(await withPayload(deps, c), {
          uniqueKeyScope: "retained",
          job: { replayOf: c.from },
        });
        return { from: c.from, id: job.id };
      }),
    ),
  );
  return { matched: matches.length, replayed: jobs.length, jobs, ...more };
}

/** A replay's request with its payload, read again when it was too large to keep. */
async function withPayload(deps: ReplayDeps, c: Checked): Promise<Record<string, unknown>> {
  if (!c.reread) return c.request;
  const json = await loadPayload(deps.store, deps.claims, c.reread);
  return { ...c.request, payload: json === undefined ? null : JSON.parse(json) };
}

/** One replay's enqueue request, checked as the API would check it; or the issues, named by path. */
async function checkedReplay(
  deps: ReplayDeps,
  request: ReplayRequest,
  job: JobItem,
): Promise<Checked | { issues: ClientIssue[] }> {
  const { overrides = {}, requestId } = request;
  const payloadJson =
    overrides.payload !== undefined ? undefined : await loadPayload(deps.store, deps.claims, job);
  const kind = deps.registry.get(job.kind);
  const dedupe = requestId !== undefined && kind && !coalesceRuleOf(kind);
  const enqueue = {
    kind: job.kind,
    payload:
      overrides.payload !== undefined
        ? overrides.payload
        : payloadJson === undefined
          ? null
          : JSON.parse(payloadJson),
    queue: overrides.queue ?? job.queue,
    maxAttempts: overrides.maxAttempts ?? job.maxAttempts,
    ...(overrides.tags ? { tags: overrides.tags } : job.tags?.length ? { tags: job.tags } : {}),
    ...(dedupe ? { uniqueKey: `replay-${requestId}-${job.id}` } : {}),
  };
  await kindsReadyFor(deps.registry, [enqueue]);
  try {
    validateEnqueue(enqueue, deps.registry, deps.queues);
    if (payloadJson !== undefined && Buffer.byteLength(payloadJson) > KEPT_PAYLOAD_BYTES)
      return { from: job.id, request: { ...enqueue, payload: undefined }, reread: job };
    return { from: job.id, request: enqueue };
  } catch (err) {
    if (!(err instanceof ClientError)) throw err;
    const own = err.issues?.length ? err.issues : [{ path: "(root)", message: err.message }];
    return {
      issues: own.map((issue) => ({
        path: issue.path.replace(
          /^payload/,
          overrides.payload !== undefined ? "overrides.payload" : "payload",
        ),
        message: `replay of ${job.id}: ${issue.message}`,
      })),
    };
  }
}
