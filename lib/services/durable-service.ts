import type { DurableContext, EventDelivery, JobSteps, TokenCompleted, TokenView } from "../job/durable.ts";
import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";
import type { Suspension } from "./suspension.ts";

/** A queue's retention in force, in days: how long its bodies in the claims bucket must last. */
export type RetentionDays = { done: number; dead: number };

/** One durable run: the handler's durable calls, and the Suspension it resolves when a call must wait. */
export interface DurableRunHandle {
  context: DurableContext;
  /** Resolves when a sleep or wait ends the run (the handler's call never returns then). */
  suspended: Promise<Suspension>;
}

/** How the suspend's write came out, for what follows it (DurableService.afterSuspend). */
export interface SuspendWrite {
  /** The run's lease token, which its event waiter's pointer carries. */
  fence: string;
  /** The message the run came with: a short sleep's wake-up is that message, delayed. */
  msg: JobMessage;
  /** The job as the write left it (as the run held it when the write lost). */
  item: JobItem;
  /** Whether the suspend itself landed (it may lose its fence, or be written as cancelled instead). */
  landed: boolean;
}

/**
 * Durable steps, sleeps and waits (docs/architecture.md §22); lib/durable/durable-service.ts. The
 * delivery pipeline and the API reach them only here, one call per stage: a run opens its context,
 * the settle step calls before and after the suspend's write, the routes ask for their answers.
 */
export interface DurableService {
  /**
   * The run stage: a claimed run's durable context under its `fence`. `live`: whether the run still
   * surely holds its job; `retentionDays`: its queue's in force.
   */
  openRun(item: JobItem, fence: string, live: () => boolean, retentionDays: RetentionDays): DurableRunHandle;
  /**
   * The settle stage, before the suspend's write: an event wait's pointer, and the job's bodies the
   * wait would outlast copied under a longer class. result: those records' new keys, for the write.
   */
  beforeSuspend(
    item: JobItem,
    s: Suspension,
    fence: string,
    retentionDays: RetentionDays,
  ): Promise<{ name: string; o: string }[]>;
  /**
   * The settle stage, after the suspend's write: a suspend that did not land takes back its
   * pointer; one that did sends a short sleep's wake-up, or resumes a job whose token was completed
   * while it decided to wait.
   */
  afterSuspend(s: Suspension, write: SuspendWrite, now: number): Promise<void>;
  /** GET /jobs/{id}/steps. */
  stepsOf(jobId: string): Promise<JobSteps>;
  /** GET /tokens/{id}. */
  tokenView(id: string): Promise<TokenView>;
  /** POST /tokens/{id}?secret=…, the API's and the token callback's. */
  completeToken(id: string, secret: string | undefined, data: unknown): Promise<TokenCompleted>;
  /** POST /events. */
  deliverEvent(raw: unknown): Promise<EventDelivery>;
  /**
   * A job ended: when it is a child a durable handler invoked (`ctx.invoke`), its parent waiting for
   * it resumes with its outcome. Called wherever a job's end is seen, as GroupService.recordEnd is;
   * idempotent.
   */
  childEnded(job: JobItem): Promise<void>;
}
