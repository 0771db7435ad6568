import pLimit from "p-limit";
import { loadPayload } from "../claims/job-bodies.ts";
import { ClientError, type ClientIssue, issuesOf } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import { MAX_REPLAY, type ReplayAnswer, ReplayRequest } from "../job/replay-schemas.ts";
import { validateEnqueue } from "../producer/validate.ts";
import type { Engine } from "../services/engine-services.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob, listJobs } from "../store/read-ops.ts";

/** List pages one replay reads at most (each a bounded index query or scan page). */
const MAX_PAGES = 500;

type ReplayDeps = Pick<Engine, "store" | "claims" | "producer" | "registry" | "queues">;
/** A replay ready to enqueue: the job it runs again, and its request. */
type Checked = { from: string; request: Record<string, unknown> };

/**
 * POST /jobs/replay (docs/architecture.md §21): the ended jobs a filter matches, run again as new
 * jobs that name the job they replay (`replayOf`); the originals are untouched. Every new request is
 * checked before any is enqueued, so an override the kind refuses replays nothing. With a
 * `requestId`, each new job's unique key is `replay-<requestId>-<original id>`, kept after it ends:
 * the same request again answers the same jobs and never matches the jobs it made (a debounced or
 * singleton kind takes no unique key, so it isn't deduped). `filter.ids` names the jobs to look at
 * (at most 100, each read by id) instead of listing them.
 */
export async function replayJobs(deps: ReplayDeps, raw: unknown): Promise<ReplayAnswer> {
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
  const matches = await matching(deps, request, request.limit ?? MAX_REPLAY);
  if (request.dryRun)
    return { matched: matches.length, replayed: 0, jobs: matches.map((j) => ({ from: j.id })) };
  const checked = await Promise.all(matches.map((job) => checkedReplay(deps, request, job)));
  const issues = checked.flatMap((c) => ("issues" in c ? c.issues : []));
  if (issues.length > 0)
    throw new ClientError(
      "validation_error",
      "some replays would be refused; nothing was replayed",
      issues.slice(0, 20),
    );
  const ready = checked.filter((c): c is Checked => "request" in c);
  const limit = pLimit(8);
  const jobs = await Promise.all(
    ready.map((c) =>
      limit(async () => {
        const { job } = await deps.producer.enqueue(c.request, {
          uniqueKeyScope: "retained",
          job: { replayOf: c.from },
        });
        return { from: c.from, id: job.id };
      }),
    ),
  );
  return { matched: matches.length, replayed: jobs.length, jobs };
}

/** The ended jobs the filter matches, oldest pages first, at most `max`. */
async function matching(deps: ReplayDeps, request: ReplayRequest, max: number): Promise<JobItem[]> {
  const { filter } = request;
  const after = (iso?: string) => (iso === undefined ? Number.NEGATIVE_INFINITY : Date.parse(iso));
  const before = (iso?: string) => (iso === undefined ? Number.POSITIVE_INFINITY : Date.parse(iso));
  // A job this same request made (its unique key names the request and its original) is never a
  // match: once it ended like its original, the same request again would replay it too.
  const ownReplay = (job: JobItem) =>
    request.requestId !== undefined &&
    job.replayOf !== undefined &&
    job.uniqueKey === `replay-${request.requestId}-${job.replayOf}`;
  const keep = (job: JobItem) =>
    job.status === filter.status &&
    !ownReplay(job) &&
    (filter.queue === undefined || job.queue === filter.queue) &&
    (filter.kind === undefined || job.kind === filter.kind) &&
    job.createdAt >= after(filter.createdAfter) &&
    job.createdAt < before(filter.createdBefore) &&
    (job.finishedAt ?? 0) >= after(filter.finishedAfter) &&
    (job.finishedAt ?? 0) < before(filter.finishedBefore) &&
    (filter.errorContains === undefined || (job.lastError ?? "").includes(filter.errorContains));
  if (filter.ids !== undefined) {
    // Named jobs: each read by id (at most MAX_REPLAY_IDS), in the order given, each once.
    const read = pLimit(8);
    const jobs = await Promise.all([...new Set(filter.ids)].map((id) => read(() => getJob(deps.store, id))));
    return jobs.filter((job): job is JobItem => job !== undefined && keep(job)).slice(0, max);
  }
  // Dead jobs come from each queue's status index; the others from a scan of the table.
  const queues =
    filter.queue !== undefined
      ? [filter.queue]
      : filter.status === "dead"
        ? deps.queues.map((q) => q.name)
        : [undefined];
  const found: JobItem[] = [];
  let pages = 0;
  for (const queue of queues) {
    let cursor: string | undefined;
    do {
      const page = await listJobs(deps.store, {
        ...(queue ? { queue } : {}),
        status: filter.status,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      for (const job of page.items) if (keep(job) && found.length < max) found.push(job);
      cursor = page.cursor;
    } while (cursor && found.length < max && ++pages < MAX_PAGES);
  }
  return found;
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
    ...(dedupe ? { uniqueKey: `replay-${requestId}-${job.id}` } : {}),
  };
  try {
    validateEnqueue(enqueue, deps.registry, deps.queues);
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
