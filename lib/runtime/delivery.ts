import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { AnyKind } from "../job/kind.ts";
import type { FlowPass } from "../services/flow-service.ts";
import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";
import type { BacklogTally } from "./backlog-tally.ts";
import type { Decision } from "./outcome.ts";
import type { Ack, InboundRecord } from "./record-types.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/** A delivery past admission: a job of a declared queue (with its settings in force) to claim. */
export interface Admitted {
  msg: JobMessage;
  queue: QueueDeclaration;
}

/** One claimed delivery: what the run, its hold and the settlement of its message need. */
export interface Delivery extends Admitted {
  record: InboundRecord;
  /** This attempt's lease token: the store's writes for the run are conditional on it. */
  fence: string;
  leaseMs: number;
  visibility: VisibilitySink;
  /** What its flow keys' gate let it through with (lib/flow/): a good run climbs adapted rates. */
  flow?: FlowPass;
}

export interface Claimed {
  item: JobItem;
  delivery: Delivery;
}

/** What a claimed job runs with, once its payload is read and checked. */
export interface Runnable {
  kind: AnyKind;
  payload: unknown;
}

/**
 * The stages of one claimed delivery. A single record goes through them in a row; a batch call
 * takes each of its records through the same ones, with one handler call between prepare and
 * settle (docs/architecture.md §18). Each stage that ends the delivery answers its Ack.
 */
export interface DeliverySteps {
  /** A job of a declared queue, neither paused nor cooling down; a lane without a claim runs here. */
  admit(
    record: InboundRecord,
    msg: JobMessage | undefined,
    visibility: VisibilitySink,
  ): Promise<Ack | Admitted>;
  /** The job taken for one attempt under a fresh fence, or the Ack its current state calls for. */
  claim(admitted: Admitted, record: InboundRecord, visibility: VisibilitySink): Promise<Ack | Claimed>;
  /** The kind and validated payload, or the decision that ends the job unrun. */
  prepare(claimed: Claimed): Promise<Decision | Runnable>;
  /** The decision written under the fence and the message settled to match. */
  settle(claimed: Claimed, decision: Decision, tally?: BacklogTally): Promise<Ack>;
}
