import type { FlowKey } from "../job/flow-key.ts";
import type { BusiestKeys, FlowKeyView } from "../job/flow-views.ts";
import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";

/** A job an enqueue is about to write (lib/producer/plan.ts's Planned), as flow control reads and marks it. */
export interface ParkableJob {
  item: JobItem;
  delaySeconds: number;
  scheduled: boolean;
  writesItem: boolean;
  /** Set by parkIfKeyFull: its key is full, its item is written in the key's line, no message goes. */
  parked?: boolean;
}

/** A place a delivery took in one of its flow keys, and when. */
export interface FlowPlace {
  key: FlowKey;
  since: number;
}

/** An adaptive rate a delivery's gate found below its limit: the key, its limit's name, the rate read. */
export interface AdaptedKey {
  key: FlowKey;
  limit: string;
  current: number;
}

/** A delivery that may go on to its claim, with the places of its flow keys it took (if any). */
export interface FlowPass {
  places?: FlowPlace[];
  /** Its keys whose adaptive rates run below their limits: a good run climbs them. */
  adapted?: AdaptedKey[];
}

/** A handler's back-pressure on its job's flow key: for how long, the limit it named, and why. */
export interface KeyThrottle {
  delaySeconds: number;
  /** Absent: the kind's first limit. */
  limit?: string;
  reason: string;
}

/** How a run ended, as far as its flow keys' rates care. */
export interface RunEndForFlow {
  done: boolean;
  /** A RetryAfterError that named a flow limit. */
  retryAfter?: KeyThrottle;
}

/**
 * Flow control per key (docs/architecture.md §20); lib/flow/flow-service.ts. The engine's one door
 * to it: one call for each stage a flow-controlled job passes.
 */
export interface FlowService {
  /** Enqueue, before the writes: jobs due now whose key is full are marked parked (no message goes). */
  parkIfKeyFull(planned: readonly ParkableJob[]): Promise<void>;
  /**
   * Enqueue, after the parked items are written: one look at each key, leaving the places the
   * request's `sent` jobs are on their way to. Never throws.
   */
  lookAfterParkingAll(parked: readonly ParkableJob[], sent: readonly ParkableJob[]): Promise<void>;
  /**
   * Claim, before it: the key's cool-down, rate and concurrency. true/false: the delivery's Ack (it
   * waits: parked, sent again, or hidden through `hide`); a FlowPass: go on to the claim.
   */
  gate(msg: JobMessage, hide: (seconds: number) => Promise<void>): Promise<boolean | FlowPass>;
  /** Claim lost: the place its gate took goes back (a late copy of a finished job must not keep one). */
  releasePlace(pass: FlowPass, jobId: string): Promise<void>;
  /** Settle, once the finalize landed: the run's place goes to the key's next parked job. Never throws. */
  leavePlace(job: JobItem): Promise<void>;
  /**
   * Claim, a delivery that waits before its gate (a singleton job whose key's earlier job hasn't
   * ended): each place it holds (handed to it from a line) goes on, since the job it waits for may be
   * in that line. It meets the gate afresh when it comes back. Never throws.
   */
  leavePlacesToWait(msg: JobMessage): Promise<void>;
  /**
   * Settle, a throttle: a flow-controlled job's key cools (the limit the handler named, else the
   * first; an adaptive rate halves), not its queue, and its message is sent afresh with the delay.
   * false: the job has no key under that limit.
   */
  coolKey(msg: JobMessage, now: number, throttle: KeyThrottle): Promise<boolean>;
  /**
   * Settle, once the finalize landed: a RetryAfterError naming a limit cools that key (halving an
   * adaptive rate); a run that ended done climbs the adapted rates its gate met. Never throws.
   */
  learnFromRun(pass: FlowPass | undefined, msg: JobMessage, now: number, end: RunEndForFlow): Promise<void>;
  /** The reaper: every key with parked jobs looked at in turn, places of ended runs handed on. */
  heal(budgetMs?: number): Promise<{ keys: number; sent: number }>;
  /** GET /keys/{kind}/{key}[?limit=<name>]: a key of the kind's first limit, or of the limit named. */
  keyView(kind: string, key: string, limit?: string): Promise<FlowKeyView>;
  /** GET /keys?queue=…. */
  busiestKeys(queue: string, limit: number): Promise<BusiestKeys>;
}
