import pLimit from "p-limit";
import * as z from "zod";
import { ClientError } from "../errors.ts";
import type { ReplayRequest } from "../job/replay-schemas.ts";
import { MAX_CURSOR_CHARS } from "../job/schemas.ts";
import type { Engine } from "../services/engine-services.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob, listJobs } from "../store/read-ops.ts";

/**
 * Which ended jobs a replay request matches (docs/architecture.md §21), a bounded piece at a time:
 * at most `max` matches and `listCalls` list pages per request, then a cursor that goes on right
 * after the last job looked at.
 */

type MatchDeps = Pick<Engine, "store" | "queues">;

/** What one request may read: its matches, and its list pages (each a bounded query or scan). */
export interface ReplayBudget {
  listCalls: number;
}
/** A request reads at most 20 list pages of at most 100 jobs: a few seconds on DynamoDB. */
export const REPLAY_BUDGET: ReplayBudget = { listCalls: 20 };

export interface Matches {
  jobs: JobItem[];
  /** Where the next request goes on, when more may match. */
  cursor?: string;
}

/**
 * Where a walk stands: the queue whose list it reads (none for the table scan of done and
 * cancelled jobs) and the store's cursor in it (none at its start).
 */
const Position = z
  .object({
    q: z.string().min(1).max(40).optional(),
    c: z
      .string()
      .max(MAX_CURSOR_CHARS)
      .regex(/^[A-Za-z0-9_-]+$/)
      .optional(),
  })
  .strict();
type Position = z.infer<typeof Position>;

const encode = (p: Position) => Buffer.from(JSON.stringify(p)).toString("base64url");

const notOurs = () =>
  new ClientError("validation_error", "invalid replay request", [
    { path: "cursor", message: "not a cursor this API returned for this filter" },
  ]);

/** The lists a filter walks, in order: each queue's status index for dead jobs, else one scan. */
function walkedLists(deps: MatchDeps, filter: ReplayRequest["filter"]): (string | undefined)[] {
  if (filter.queue !== undefined) return [filter.queue];
  return filter.status === "dead" ? deps.queues.map((q) => q.name) : [undefined];
}

/** The cursor's position among the filter's lists, or a 400 for one this filter never handed out. */
function decodePosition(
  cursor: string,
  lists: readonly (string | undefined)[],
): { list: number; c?: string } {
  let parsed: z.ZodSafeParseResult<Position>;
  try {
    parsed = Position.safeParse(JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")));
  } catch {
    throw notOurs();
  }
  if (!parsed.success) throw notOurs();
  const list = lists.indexOf(parsed.data.q);
  if (list < 0) throw notOurs();
  return { list, ...(parsed.data.c !== undefined ? { c: parsed.data.c } : {}) };
}

/**
 * The ended jobs the request's filter matches, at most `max`, in the order the lists read them,
 * from its cursor on. Each list page asks for no more jobs than are still wanted, so a page is never
 * cut short and the store's cursor after it is exactly where the next request starts.
 */
export async function matchingJobs(
  deps: MatchDeps,
  request: ReplayRequest,
  max: number,
  budget: ReplayBudget,
): Promise<Matches> {
  const { filter } = request;
  const keep = matcher(request);
  if (filter.ids !== undefined) {
    // Named jobs: each read by id (at most MAX_REPLAY_IDS), in the order given, each once.
    const read = pLimit(8);
    const jobs = await Promise.all([...new Set(filter.ids)].map((id) => read(() => getJob(deps.store, id))));
    return { jobs: jobs.filter((job): job is JobItem => job !== undefined && keep(job)).slice(0, max) };
  }
  const lists = walkedLists(deps, filter);
  let { list, c: cursor } = request.cursor
    ? decodePosition(request.cursor, lists)
    : { list: 0, c: undefined };
  const found: JobItem[] = [];
  for (let calls = 0; list < lists.length; calls++) {
    if (found.length >= max || calls >= budget.listCalls) {
      const q = lists[list];
      return { jobs: found, cursor: encode({ ...(q ? { q } : {}), ...(cursor ? { c: cursor } : {}) }) };
    }
    const queue = lists[list];
    const page = await listJobs(deps.store, {
      ...(queue ? { queue } : {}),
      status: filter.status,
      limit: Math.min(100, max - found.length),
      ...(cursor ? { cursor } : {}),
    });
    for (const job of page.items) if (keep(job)) found.push(job);
    cursor = page.cursor;
    if (!cursor) list += 1;
  }
  return { jobs: found };
}

/** Whether a job is one the request replays. */
function matcher(request: ReplayRequest): (job: JobItem) => boolean {
  const { filter } = request;
  const after = (iso?: string) => (iso === undefined ? Number.NEGATIVE_INFINITY : Date.parse(iso));
  const before = (iso?: string) => (iso === undefined ? Number.POSITIVE_INFINITY : Date.parse(iso));
  // A job this same request made (its unique key names the request and its original) is never a
  // match: once it ended like its original, the same request again would replay it too.
  const ownReplay = (job: JobItem) =>
    request.requestId !== undefined &&
    job.replayOf !== undefined &&
    job.uniqueKey === `replay-${request.requestId}-${job.replayOf}`;
  return (job) =>
    job.status === filter.status &&
    !ownReplay(job) &&
    (filter.queue === undefined || job.queue === filter.queue) &&
    (filter.kind === undefined || job.kind === filter.kind) &&
    job.createdAt >= after(filter.createdAfter) &&
    job.createdAt < before(filter.createdBefore) &&
    (job.finishedAt ?? 0) >= after(filter.finishedAfter) &&
    (job.finishedAt ?? 0) < before(filter.finishedBefore) &&
    (filter.errorContains === undefined || (job.lastError ?? "").includes(filter.errorContains));
}
