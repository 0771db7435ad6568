import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { ClientError } from "../errors.ts";
import type { CheckedRequest } from "../job/check-request.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import type { AnyKind } from "../job/kind.ts";
import type {
  CoalesceService,
  CoalesceTarget,
  KeyedJob,
  KeyLockTaken,
} from "../services/coalesce-service.ts";
import type { JobMessage } from "../transport/job-message.ts";
import type { CoalesceDeps } from "./coalesce-deps.ts";
import { cancelEarlierJobs, earlierJobRuns, singletonLookSeconds } from "./earlier-jobs.ts";
import { giveKeyBack, reserveKey } from "./key-lock.ts";

/**
 * Debounce and singleton (docs/architecture.md §19): the engine's one door to them. The enqueue's
 * write order calls it at its reserve, unwind and after-write stages; a delivery at its claim.
 */
export class Coalescing implements CoalesceService {
  private readonly deps: CoalesceDeps;

  constructor(deps: CoalesceDeps) {
    this.deps = deps;
  }

  targetOf(
    valid: CheckedRequest<AnyKind>,
    job?: { member?: unknown; completes?: string },
  ): CoalesceTarget | undefined {
    if (valid.coalesceKey === undefined) return undefined;
    const rule = coalesceRuleOf(valid.kind);
    if (!rule) return undefined;
    // A join would answer for two places of a group (its create refuses such a kind too).
    if (job?.member || job?.completes)
      throw new ClientError(
        "validation_error",
        `kind "${valid.kind.name}" debounces or is a singleton: it can't be a group's child or completion job`,
      );
    return { rule, key: valid.coalesceKey };
  }

  reserve(job: KeyedJob, queue: QueueDeclaration, target: CoalesceTarget) {
    return reserveKey(this.deps, job, queue, target);
  }

  unwind(taken: KeyLockTaken): Promise<void> {
    return giveKeyBack(this.deps, taken);
  }

  async written(taken: KeyLockTaken): Promise<void> {
    const { rule } = taken.target;
    if (rule.type === "singleton" && rule.mode === "cancel-running")
      await cancelEarlierJobs(this.deps, taken.after);
  }

  async waitForEarlierJobs(
    msg: JobMessage,
    record: { receiptHandle: string; receiveCount?: number },
    visibility: { change(queue: string, receiptHandle: string, seconds: number): Promise<void> },
  ): Promise<boolean> {
    if (!msg.after?.length || !(await earlierJobRuns(this.deps.store, msg.after))) return false;
    // A singleton key runs one job at a time: look again shortly, the attempt unspent.
    this.deps.metrics.count("singletonWaits", msg.queue, msg.kind);
    await visibility.change(msg.queue, record.receiptHandle, singletonLookSeconds(record.receiveCount));
    return true;
  }
}
