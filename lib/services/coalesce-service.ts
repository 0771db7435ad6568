import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { CheckedRequest } from "../job/check-request.ts";
import type { CoalesceRule } from "../job/coalesce.ts";
import type { AnyKind } from "../job/kind.ts";
import type { EnqueueResult } from "../job/schemas.ts";
import type { CoalesceLock } from "../store/coalesce-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";

/** A debounced or singleton enqueue's key and its kind's rule (docs/architecture.md §19). */
export interface CoalesceTarget {
  rule: CoalesceRule;
  key: string;
}

/** A new job of a coalesce key on its way, as the enqueue planned it (its item and message amended in place). */
export interface KeyedJob {
  item: JobItem;
  message: JobMessage;
  readonly payloadJson: string;
}

/** What an enqueue's reserve took: the key's lock, moved to the new job from the one it named. */
export interface KeyLockTaken {
  target: CoalesceTarget;
  kind: string;
  mine: CoalesceLock;
  previous?: CoalesceLock;
  /** When the lock may expire (epoch s): the new job's dead-retention horizon. */
  expiresAt: number;
  /** The key's jobs the new one waits for (a singleton's), which cancel-running cancels. */
  after: readonly string[];
}

/**
 * Debounce and singleton (docs/architecture.md §19), implemented in lib/coalesce/. One call per
 * stage of the enqueue's write order (lib/producer/write-order.ts) and of a delivery's claim; the
 * rest of the engine reaches coalescing only through these.
 */
export interface CoalesceService {
  /** Check: the request's key and its kind's rule; undefined when the kind doesn't coalesce. A group's job is refused. */
  targetOf(
    valid: CheckedRequest<AnyKind>,
    job?: { member?: unknown; completes?: string },
  ): CoalesceTarget | undefined;
  /**
   * Reserve: join the job the key's lock names (the answer, `debounced`), or move the lock to this
   * new job (`taken`; a singleton's item and message get the earlier jobs it waits for).
   */
  reserve(
    job: KeyedJob,
    queue: QueueDeclaration,
    target: CoalesceTarget,
  ): Promise<{ joined: EnqueueResult } | { taken: KeyLockTaken }>;
  /** Unwind: the new job's message could not go out; the lock goes back to the job it named. */
  unwind(taken: KeyLockTaken): Promise<void>;
  /** After the item write: cancel-running cancels the key's earlier jobs. */
  written(taken: KeyLockTaken): Promise<void>;
  /**
   * Claim: a singleton job whose key's earlier jobs may still run is hidden to look again later, no
   * attempt spent. result: true when it waits (its message stays on the queue).
   */
  waitForEarlierJobs(
    msg: JobMessage,
    record: { receiptHandle: string; receiveCount?: number },
    visibility: { change(queue: string, receiptHandle: string, seconds: number): Promise<void> },
  ): Promise<boolean>;
}
