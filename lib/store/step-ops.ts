import type { StoreTransitions } from "../job/status.ts";
import {
  attributeAfter,
  attributeEquals,
  attributeExists,
  attributeMissing,
  formatKnown,
  leaseHeldBy,
  scheduledIn,
  setContains,
  statusIs,
} from "./conditions.ts";
import {
  conditionalUpdate,
  conditionalUpdateNoReturn,
  orOnConflict,
  type StoreContext,
  wonRace,
} from "./context.ts";
import { and, type Condition, type Expr, or, Update } from "./expression.ts";
import type { JobItem } from "./job-item.ts";
import { indexKeys, jobKey } from "./keys.ts";
import { eventPairOf, type StepRecord } from "./step-record.ts";
import { raiseFormat } from "./stored-formats.ts";

/** No entry of this name in the job's steps map (the map itself may be missing). */
export const stepMissing =
  (name: string): Condition =>
  (e: Expr) =>
    `attribute_not_exists(${e.entry("steps", name)})`;

/**
 * Adds a step's entry to an update. A job's first step writes the whole map (an entry can't be set
 * in a map that isn't there), so the caller says whether the item it read has one; the condition
 * it returns holds the write to that: a map that appeared meanwhile loses the race, it is not lost.
 * `version`: the kind's version the run runs, which the job keeps if it has none yet (its journal's
 * first write, or the first after an operator's resume dropped it).
 */
export function addStep(
  update: Update,
  name: string,
  record: StepRecord,
  mapExists: boolean,
  version?: string,
): Condition {
  if (version !== undefined) update.setIfAbsent("version", version);
  // A record of today's shape (its op and place) in a job an older version may have started.
  raiseFormat(update, "job");
  if (mapExists) {
    update.setEntry("steps", name, record);
    return and(attributeExists("steps"), stepMissing(name));
  }
  update.set("steps", { [name]: record });
  return attributeMissing("steps");
}

export type RecordStepResult =
  | { recorded: true; item: JobItem }
  | { recorded: false; reason: "lease_lost" }
  | { recorded: false; reason: "exists"; record: StepRecord; item: JobItem };

/**
 * recordStep — a durable step's result, written once per job under the run's fence.
 * input: the job id, the run's fence, the step's name and record, whether the item has a steps map,
 *   the kind's version the run runs (kept as the job's if it has none).
 * condition: running under this fence, its lease not yet ended (a run thawed after its lease lapsed
 *   records nothing, even before another worker took the job over) AND the name has no entry yet.
 * result: the new item; or lease_lost (a takeover owns the job: nothing written, the stale run must
 *   stop), or exists with the entry already there (another run of this job recorded it first). A map
 *   the caller didn't know of (its run's steps side by side) is written into once more.
 */
export async function recordStep(
  ctx: StoreContext,
  jobId: string,
  fence: string,
  name: string,
  record: StepRecord,
  mapExists: boolean,
  version?: string,
): Promise<RecordStepResult> {
  const write = conditionalUpdate<JobItem>(ctx, "recordStep", jobKey(jobId), (e) => {
    const update = new Update(e);
    const fresh = addStep(update, name, record, mapExists, version);
    const live = attributeAfter("leaseUntil", ctx.clock.now());
    return { update, condition: and(statusIs("running"), leaseHeldBy(fence), live, fresh) };
  });
  return orOnConflict(
    write.then((item): RecordStepResult => ({ recorded: true, item })),
    (current: JobItem | undefined): RecordStepResult | Promise<RecordStepResult> => {
      const ours =
        current?.status === "running" &&
        current.leaseToken === fence &&
        (current.leaseUntil ?? 0) > ctx.clock.now();
      if (!ours || !current) return { recorded: false, reason: "lease_lost" };
      const existing = current.steps?.[name];
      // The map appeared under our own fence (a step of this run that ran alongside wrote it first):
      // write the entry into it.
      if (!existing && !mapExists && current.steps !== undefined)
        return recordStep(ctx, jobId, fence, name, record, true, version);
      if (!existing) return { recorded: false, reason: "lease_lost" };
      return { recorded: false, reason: "exists", record: existing, item: current };
    },
  );
}

export const recordStepTransitions = [] as const satisfies StoreTransitions;

/**
 * restartJournal — a suspended job resumed under another version of its kind, whose onVersionChange
 * is "restart": its journal goes, and it runs from the top as the new version's.
 * input: the job id, the run's fence, the kind's version the run runs.
 * condition: running under this fence, its lease not yet ended (as recordStep's).
 * result: true, the steps map removed and `version` set (the run's first record writes the map
 *   anew); false: the run lost its job, nothing written. The records' claims objects expire with
 *   their class.
 */
export async function restartJournal(
  ctx: StoreContext,
  jobId: string,
  fence: string,
  version: string,
): Promise<boolean> {
  const write = conditionalUpdateNoReturn(
    ctx,
    "restartJournal",
    jobKey(jobId),
    (e) => ({
      update: raiseFormat(new Update(e).remove("steps").set("version", version), "job"),
      condition: and(statusIs("running"), leaseHeldBy(fence), attributeAfter("leaseUntil", ctx.clock.now())),
    }),
    { readCurrent: false },
  );
  return wonRace(write);
}

/** The job stays running: only its journal and version change. */
export const restartJournalTransitions = [] as const satisfies StoreTransitions;

/**
 * Which wait a resume must find the job in: a token's id, an event's name and match, or a child
 * job's id (`ctx.invoke`). An event's and a child's name the step their data is added to.
 */
export type WaitMatch =
  | { token: string }
  | { event: string; match: string; step: string }
  | { child: string; step: string };

/**
 * The job is still scheduled (its index key witnesses it: scheduledIn) and waits, as `match` says
 * (alone, or as one branch of a race: `waiting.tokens`, `waiting.pairs`); a cancel, a claim, a
 * timeout's run or a race's other branch moved it on. No `status`: the token callback's role may not
 * touch that attribute of a job (RESUME_ON_TOKEN_ATTRIBUTES).
 */
const waitsFor = (queue: string, match: WaitMatch): Condition =>
  "token" in match
    ? and(
        scheduledIn(queue),
        or(attributeEquals("waiting.token", match.token), setContains("waiting.tokens", match.token)),
      )
    : "child" in match
      ? and(scheduledIn(queue), attributeEquals("waiting.child", match.child))
      : and(
          scheduledIn(queue),
          or(
            and(attributeEquals("waiting.event", match.event), attributeEquals("waiting.match", match.match)),
            setContains("waiting.pairs", eventPairOf(match.event, match.match)),
          ),
        );

/**
 * Every top-level attribute resumeWaiting names for a token's wait: the key, what it sets, what its
 * condition reads. The token callback's role may update a job's item in these and no other (IAM's
 * `dynamodb:Attributes`, lib/deploy-plan/grants.ts; test/e2e/lambda-bundles.test.ts holds the real
 * requests to it). An event's resume also writes `steps`, from the API function only.
 */
export const RESUME_ON_TOKEN_ATTRIBUTES = [
  "pk",
  "sk",
  "gsi1pk",
  "gsi1sk",
  "runAt",
  "promotingUntil",
  "waiting",
] as const;

/**
 * resumeWaiting — a suspended job's wait is over (its token completed, its event arrived, its child
 *   job ended).
 * input: the job (id, queue), what it must wait for, the promotion hold for its message's send, and
 *   for an event or a child the data's entry fields (v or o; for an event also its id e, and in a
 *   race its branch w) to add to the wait's step.
 * condition: scheduled AND waiting for exactly this (a cancel, a timeout's run or another resume
 *   moved it first: nothing written).
 * result: true when it landed: still scheduled, but due now and no longer waiting, held against the
 *   reaper's promotion until `holdUntil` while the caller sends its message (if the caller dies
 *   first, the reaper sends it once the hold lapses: no job is left waiting for a message that never
 *   comes). No item comes back (the token callback's role may not read one through a write). false
 *   when the condition lost.
 */
export async function resumeWaiting(
  ctx: StoreContext,
  job: { id: string; queue: string },
  match: WaitMatch,
  holdUntil: number,
  data?: Pick<StepRecord, "v" | "o" | "e" | "w">,
): Promise<boolean> {
  const now = ctx.clock.now();
  const write = conditionalUpdateNoReturn(
    ctx,
    "resumeWaiting",
    jobKey(job.id),
    (e) => {
      const update = new Update(e)
        .set("runAt", now)
        .set("promotingUntil", holdUntil)
        .setAll(indexKeys(job.queue, "scheduled", job.id, now, ctx.layout.indexShards))
        .remove("waiting");
      if ("step" in match && data) {
        for (const [field, value] of Object.entries(data))
          if (value !== undefined) update.setEntry("steps", match.step, value, field);
        // An event's id (e) or a race's winner (w) is of today's format: the item's version rises
        // with it, and a job of a newer version is left to it.
        raiseFormat(update, "job");
        return { update, condition: and(waitsFor(job.queue, match), formatKnown("job")) };
      }
      return { update, condition: waitsFor(job.queue, match) };
    },
    { readCurrent: false },
  );
  return wonRace(write);
}

/** The job stays scheduled: only its due time, its hold and its wait change. */
export const resumeWaitingTransitions = [] as const satisfies StoreTransitions;
