import * as z from "zod";
import { BoundedJson } from "./json-depth.ts";
import { MAX_CURSOR_CHARS, MaxAttempts, Tags } from "./schemas.ts";

/** The statuses a replay takes jobs from: those that ended. */
export const replayableStatuses = ["dead", "done", "cancelled"] as const;
/**
 * A replay request takes at most this many jobs (its `limit` and its default): each is checked,
 * its payload read and its job enqueued within the request, which must end well inside API
 * Gateway's 29 s. More matches are answered with a cursor to go on from.
 */
export const MAX_REPLAY = 500;
/** A filter names at most this many jobs by id (`filter.ids`: the console's selected rows). */
export const MAX_REPLAY_IDS = 100;

const Time = z.iso.datetime({ offset: true });

/**
 * POST /jobs/replay (docs/architecture.md §21): which ended jobs to run again as new jobs, what to
 * change in them, and whether only to count them (`dryRun`). A request that enqueues names itself
 * with a `requestId`: the same one again (a retry after a timeout) replays nothing twice. A request
 * takes at most `limit` (≤ MAX_REPLAY) jobs; `cursor`, from the last answer, goes on from there.
 */
export const ReplayRequest = z
  .object({
    filter: z
      .object({
        status: z.enum(replayableStatuses),
        kind: z.string().min(1).max(64).optional(),
        queue: z.string().min(1).max(40).optional(),
        createdAfter: Time.optional(),
        createdBefore: Time.optional(),
        finishedAfter: Time.optional(),
        finishedBefore: Time.optional(),
        errorContains: z.string().min(1).max(200).optional(),
        /**
         * Only these jobs (each read by id): those of them the rest of the filter matches. Ids
         * that name no job, or a job in another status, are not matched.
         */
        ids: z.array(z.string().min(1).max(64)).min(1).max(MAX_REPLAY_IDS).optional(),
      })
      .strict(),
    overrides: z
      .object({
        payload: BoundedJson.optional(),
        queue: z.string().min(1).max(40).optional(),
        maxAttempts: MaxAttempts.optional(),
        /** The replays' own tags; absent, each replay carries its job's. */
        tags: Tags.optional(),
      })
      .strict()
      .optional(),
    limit: z.number().int().min(1).max(MAX_REPLAY).optional(),
    dryRun: z.boolean().optional(),
    requestId: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, "letters, digits, _ and -, at most 64")
      .optional(),
    /** Where the last answer stopped (its `cursor`), for the same request: opaque to the caller. */
    cursor: z
      .string()
      .max(MAX_CURSOR_CHARS)
      .regex(/^[A-Za-z0-9_-]+$/, "not a cursor this API returned")
      .optional(),
  })
  .strict()
  .refine((r) => r.limit !== undefined || Object.keys(r.filter).length > 1, {
    message: "a filter on status alone matches every such job: give a limit, or narrow it",
    path: ["limit"],
  })
  .refine((r) => r.dryRun === true || r.requestId !== undefined, {
    message:
      "a replay that enqueues needs a requestId: the same request again (a retry after a timeout) then replays nothing twice; only a dryRun goes without",
    path: ["requestId"],
  })
  .refine((r) => r.cursor === undefined || r.filter.ids === undefined, {
    message: "filter.ids is read whole in one request: it takes no cursor",
    path: ["cursor"],
  });
export type ReplayRequest = z.infer<typeof ReplayRequest>;

export interface ReplayAnswer {
  /** Matches of this request (at most its limit). */
  matched: number;
  replayed: number;
  /** Each match, and the new job that replays it (none on a dry run). */
  jobs: { from: string; id?: string }[];
  /** More may match: the same request again with this cursor goes on after this one's matches. */
  cursor?: string;
}
