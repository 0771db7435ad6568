import * as z from "zod";
import { claimKey, needsClaimCheck } from "../claims/claim-keys.ts";
import { putClaim } from "../claims/claim-store.ts";
import { loadJobView } from "../claims/job-bodies.ts";
import { ClientError, InvalidItemState, issuesOf } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import type { JobView } from "../job/schemas.ts";
import { promotionHoldUntil, sendPromoted } from "../ops/promote.ts";
import { retentionExpiry } from "../retention.ts";
import type { Engine } from "../services/engine-services.ts";
import { putPayload } from "../store/enqueue-ops.ts";
import { INLINE_PAYLOAD_BYTES, type JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { type Resume, redrive } from "../store/redrive-ops.ts";
import { kindsReadyFor, type ValidRequest, validateEnqueue } from "./validate.ts";

/** POST /jobs/{id}/resume's body: nothing, or a new payload for the job's next runs. */
export const ResumeRequest = z.object({ payload: z.unknown().optional() }).strict();

type ResumeDeps = Pick<Engine, "store" | "claims" | "transport" | "clock" | "registry" | "queues"> &
  Partial<Pick<Engine, "realtime">>;

/**
 * Resumes a paused job: an operator's resume (docs/architecture.md §21; not a waiting job's, §22:
 * lib/durable/resume-waiting.ts): optionally with a new payload,
 * checked against the kind's schema first (a 400 naming the field, nothing written), then the
 * redrive's path: scheduled and held, its message sent, queued, with a fresh set of attempts.
 * A job that isn't paused: 409. The new payload is written before the job's status changes, where
 * the enqueue would keep it (inline, its own item, the claims bucket); two resumes of one job at once
 * with different large payloads may leave either payload behind the one that wins.
 */
export async function resumePausedJob(deps: ResumeDeps, id: string, raw: unknown): Promise<JobView> {
  const body = ResumeRequest.safeParse(raw ?? {});
  if (!body.success)
    throw new ClientError("validation_error", "invalid resume request", issuesOf(body.error));
  const job = await getJob(deps.store, id);
  if (!job) throw new ClientError("not_found", `job ${id} not found`);
  if (job.status !== "paused")
    throw new InvalidItemState(`job ${id} is ${job.status}; only paused jobs can be resumed`, job);
  const now = deps.clock.now();
  const resume: Resume = {};
  // A durable job (paused for a version change, say) runs on under the code in force: the operator
  // chose to resume it so. Its next record sets that code's version (docs/guide/durable-jobs.md, "Versions").
  if (job.version !== undefined) resume.dropVersion = true;
  if (body.data.payload !== undefined) {
    // The enqueue's own checks (schema, size, depth), so a resumed payload is one an enqueue would take.
    await kindsReadyFor(deps.registry, [job]);
    const checked = validateEnqueue(
      { kind: job.kind, queue: job.queue, payload: body.data.payload },
      deps.registry,
      deps.queues,
    );
    refuseOtherKeys(job, checked);
    resume.payload = await storedPayload(deps, job, checked.payloadJson, now);
  }
  const moved = await redrive(deps.store, job, promotionHoldUntil(now, now), resume);
  const { queued } = await sendPromoted(deps, moved);
  const back = queued ? { ...moved, status: "queued" as const } : moved;
  deps.realtime?.queued(back);
  return loadJobView(deps.store, deps.claims, back);
}

/**
 * A resume keeps the job's keys: its flow key's place and line, its singleton or debounce key's
 * lock and its batch key's backlog were taken under them, and the item, its message and those
 * records would disagree if only the payload moved. So a new payload must give the same keys as the
 * job holds; one that gives another is a 400 naming the key (enqueue a new job for that key).
 */
function refuseOtherKeys(job: JobItem, checked: ValidRequest): void {
  const rule = job.coalesceKey === undefined ? undefined : coalesceRuleOf(checked.kind)?.type;
  const otherFlowKeys = Object.entries(job.flowKeys ?? {}).map(
    ([limit, held]) => [`flow (limit "${limit}")`, held, checked.flowKeys?.[limit]] as const,
  );
  const pairs = [
    ["flow", job.flowKey, checked.flowKey],
    ...otherFlowKeys,
    [rule ?? "coalesce", job.coalesceKey, checked.coalesceKey],
    ["batch", job.batchKey, checked.batchKey],
  ] as const;
  for (const [what, held, given] of pairs) {
    if (held === undefined || given === undefined || held === given) continue;
    throw new ClientError("validation_error", `the new payload gives job ${job.id} another ${what} key`, [
      {
        path: "payload",
        message: `it gives ${what} key "${given}", but the job's is "${held}": a resume keeps the job's keys; enqueue a new job for another key`,
      },
    ]);
  }
}

/** Where a new payload is kept, as the enqueue would keep it; the large ones are written here. */
async function storedPayload(
  deps: ResumeDeps,
  job: JobItem,
  json: string,
  now: number,
): Promise<NonNullable<Resume["payload"]>> {
  const queue = deps.queues.find((q) => q.name === job.queue);
  const keepUntil = retentionExpiry(now, queue?.retentionDays.dead ?? 14);
  if (needsClaimCheck(json)) {
    const payloadObject = claimKey(job.id, "payload", now, keepUntil * 1000);
    await putClaim(deps.claims, payloadObject, json);
    return { payloadObject };
  }
  if (Buffer.byteLength(json) <= INLINE_PAYLOAD_BYTES) return { payload: json };
  await putPayload(deps.store, job.id, json, keepUntil);
  return { payloadRef: true };
}
