import pLimit from "p-limit";
import { internalErrorBody } from "../errors.ts";
import { errorFields } from "../observability/log.ts";
import { putJob } from "../store/enqueue-ops.ts";
import { putTagEntries, type TaggedJob, tagEntries } from "../store/tag-entries.ts";
import type { SqsTransport } from "../transport/sqs-transport.ts";
import { admitToKeyBacklog, unwindUnsent } from "./backlog-admission.ts";
import { reserve } from "./reserve.ts";
import type { Outcome, Sending, Submission, WriteOrderDeps } from "./submission.ts";

/** Store writes of one submission in flight at once. */
const WRITES_AT_ONCE = 16;

/**
 * The enqueue's write order, the only place it is written (docs/architecture.md §6): a single
 * enqueue is a submission of one, a batch one of many, a debounced or singleton job a submission of
 * one whose reserve takes its coalesce key (§19). Each job gets its outcome; none fails another,
 * but for a tag entry the store refuses, which fails the jobs of the call it names.
 *
 * 1. reserve: a large payload's item or object, then its key's lock (a duplicate or a join is
 *    answered here, and nothing else is written);
 * 2. backlog: a batch kind's place in its key's backlog (§18), then the tagged jobs' tag index
 *    entries (§3), one for each tag its jobs share (lib/store/tag-entries.ts), so a job is found by
 *    its tags from its first moment;
 * 3. park: a flow key with no place free takes the job into its line, with no message (§20);
 * 4. send: the message, which carries the whole job: a crash before the item write still runs it
 *    (the claim builds the item from the message). A job due past SQS's 15-minute delay has none
 *    yet: its item, in the scheduled index, is its one write, and the reaper sends it later;
 * 5. unwind: a message that could not go out frees what 1 and 2 took (nothing of the job exists);
 * 6. write: the job item (a worker may have built it from the message first: that's the job);
 * 7. count: `enqueued`, after cancel-running's cancels of the key's earlier jobs, and publish its
 *    `queued` (or `scheduled`) status (docs/architecture.md §25);
 * 8. look again: at each flow key a job was parked in, as the delivery's gate does after parking.
 *
 * A crash after 1 leaves a payload that expires and a lock whose job never comes, which a later
 * enqueue takes over after its grace; a scheduled or parked job has no message, so its item write
 * failing is the caller's error.
 */
export async function submit(
  deps: WriteOrderDeps,
  entries: readonly Submission[],
  sending: Sending,
): Promise<void> {
  const limit = pLimit(WRITES_AT_ONCE);
  await Promise.all(
    entries.map((entry) =>
      limit(async () => {
        try {
          const answer = await reserve(deps, entry);
          if (answer) entry.outcome = { answer };
          else await admitToKeyBacklog(deps.store, entry.planned, entry.queue);
        } catch (error) {
          entry.outcome = { error };
        }
      }),
    ),
  );
  await indexTags(deps, entries);
  const ready = entries.filter((entry) => entry.outcome === undefined);
  const readyJobs = ready.map((e) => e.planned);
  await deps.flow.parkIfKeyFull(readyJobs);
  // Scheduled jobs have no message yet: the reaper sends it when they fall due. Parked ones wait
  // for a place of their flow key.
  const unsent = await send(
    deps.transport,
    ready.filter((e) => !e.planned.scheduled && !e.planned.parked),
    sending,
  );
  await Promise.all(
    ready.map((entry) =>
      limit(async () => {
        entry.outcome = await finish(deps, entry, unsent.get(entry.planned.item.id), sending);
      }),
    ),
  );
  const accepted = ready.filter((e) => e.outcome && "accepted" in e.outcome).map((e) => e.planned);
  const parked = accepted.filter((p) => p.parked);
  if (parked.length > 0)
    await deps.flow.lookAfterParkingAll(
      parked,
      accepted.filter((p) => !p.parked && !p.scheduled && p.delaySeconds === 0),
    );
}

/**
 * Step 2's tag index entries, for the jobs whose reserve went through: an entry the store refused
 * fails each job it names (each job's own outcome; the others go on).
 */
async function indexTags(deps: WriteOrderDeps, entries: readonly Submission[]): Promise<void> {
  const tagged = new Map<string, Submission>();
  const jobs: TaggedJob[] = [];
  for (const entry of entries)
    if (entry.outcome === undefined && entry.planned.tagged && !tagged.has(entry.planned.item.id)) {
      tagged.set(entry.planned.item.id, entry);
      jobs.push(entry.planned.tagged);
    }
  if (jobs.length === 0) return;
  const index = tagEntries(jobs);
  const refusals = await putTagEntries(deps.store, index);
  const failed = new Map<Submission, unknown>();
  index.forEach((written, n) => {
    const error = refusals[n];
    if (error === undefined) return;
    for (const id of written.ids) {
      const entry = tagged.get(id);
      if (entry && !failed.has(entry)) failed.set(entry, error);
    }
  });
  await Promise.all(
    [...failed].map(async ([entry, error]) => {
      entry.outcome = await unwound(deps, entry, { error });
    }),
  );
}

/**
 * A job that won't be sent (its message or a tag entry refused): nothing of it exists, so what its
 * reserve and backlog took is freed, and the caller's retry isn't a conflict. result: `outcome`,
 * or the error that kept it from being freed.
 */
async function unwound(
  deps: WriteOrderDeps,
  { planned, queue, taken }: Pick<Submission, "planned" | "queue" | "taken">,
  outcome: Outcome,
): Promise<Outcome> {
  try {
    await unwindUnsent(deps.store, planned, queue);
    if (taken) await deps.coalesce.unwind(taken);
  } catch (error) {
    return { error };
  }
  return outcome;
}

/** Step 4. result: the jobs whose message did not go out, by id, with what to answer for each. */
async function send(
  transport: SqsTransport,
  entries: readonly Submission[],
  sending: Sending,
): Promise<Map<string, Outcome & { error: unknown }>> {
  const unsent = new Map<string, Outcome & { error: unknown }>();
  const jobs = entries.map(({ planned: p }) => ({ message: p.message, delaySeconds: p.delaySeconds }));
  if (sending === "alone") {
    for (const job of jobs)
      await transport.send(job).catch((error: unknown) => unsent.set(job.message.id, { error }));
    return unsent;
  }
  const error = internalErrorBody("could not queue; retry").error;
  for (const id of await transport.sendBatch(jobs)) unsent.set(id, { error, body: error });
  return unsent;
}

/** Steps 5 to 7 for one job whose reserve went through. */
async function finish(
  deps: WriteOrderDeps,
  { planned: p, queue, taken }: Submission,
  notSent: (Outcome & { error: unknown }) | undefined,
  sending: Sending,
): Promise<Outcome> {
  if (notSent) return unwound(deps, { planned: p, queue, taken }, notSent);
  let accepted = p.item;
  try {
    if (p.writesItem) {
      // A batch needs only the outcome, not the item a faster worker may have written.
      const put = await putJob(deps.store, p.item, sending === "alone" ? {} : { readCurrent: false });
      // The worker got there first and built the job from the message: report what it is now.
      if (!put.created && put.current) accepted = put.current;
    }
  } catch (error) {
    // A scheduled or parked job has no message: its item is the only record, so the failure is the caller's.
    if (p.scheduled || p.parked) return { error };
    // The message is out: the worker will build the job from it, so the job is accepted.
    deps.log.warn("job item write failed after send; the message carries the job", errorFields(error));
  }
  if (taken) await deps.coalesce.written(taken);
  deps.metrics.count("enqueued", queue.name, p.item.kind);
  // The job's first status, on its topic and its queue's; not when a worker built it first (it runs).
  if (accepted === p.item) deps.realtime?.queued(p.item);
  return { accepted };
}
