import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { ErrorBody } from "../errors.ts";
import type { EnqueueResult } from "../job/schemas.ts";
import type { CoalesceTarget, KeyLockTaken } from "../services/coalesce-service.ts";
import type { Engine, EnqueueOptions } from "../services/engine-services.ts";
import type { JobItem } from "../store/job-item.ts";
import type { Planned } from "./plan.ts";

/** What the enqueue's write order uses of the engine. */
export type WriteOrderDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "registry" | "queues" | "clock" | "metrics" | "log" | "flow" | "coalesce"
> &
  Partial<Pick<Engine, "realtime">>;

/** One job on its way through the write order (lib/producer/write-order.ts), and what became of it. */
export interface Submission {
  planned: Planned;
  queue: QueueDeclaration;
  uniqueKeyScope?: EnqueueOptions["uniqueKeyScope"];
  /** Its kind debounces or is a singleton: the reserve takes its coalesce key instead of a unique key. */
  target?: CoalesceTarget;
  /** The coalesce key's lock the reserve moved to this job (unwound if its message can't go out). */
  taken?: KeyLockTaken;
  outcome?: Outcome;
}

/**
 * What became of a job: accepted (its item as written, or as a worker that got there first built
 * it), answered by the job that already had its key (a duplicate, or the job it joined), or failed
 * (`body`: the batch answer when it isn't the error's own).
 */
export type Outcome =
  | { accepted: JobItem }
  | { answer: EnqueueResult }
  | { error: unknown; body?: ErrorBody["error"] };

/**
 * How a submission's messages go out. "alone": a single enqueue's one job, by SendMessage; a failure
 * is the caller's error as SQS gave it, and the item write reads back the job a faster worker built.
 * "shared": a batch's jobs, in SendMessageBatch requests of ten; each entry fails alone.
 */
export type Sending = "alone" | "shared";
