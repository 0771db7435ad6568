import type { GroupFailureMode } from "../job/group-schemas.ts";
import type { GroupStatus } from "../job/group-status.ts";
import type { TerminalStatus } from "../job/status.ts";
import type { JobItem } from "./job-fields.ts";

/**
 * A child's membership in its group: the group, the slice that records it, its position there. A job
 * carries it from its message to its item, so whoever ends the job can record it
 * (docs/architecture.md §15). Its shape is declared with the job's fields (lib/store/job-fields.ts).
 */
export type Member = NonNullable<JobItem["member"]>;

/** Children per slice: a slice item of 25 ULIDs and its three sets stays under 1 KB (1 WCU a write). */
export const SLICE_SIZE = 25;

/**
 * The group item: its settings and progress, never its children (they are in the slices). Rewritten
 * once per finished slice, not per child.
 */
export interface GroupItem {
  pk: string;
  sk: string;
  id: string;
  status: GroupStatus;
  failure: GroupFailureMode;
  onComplete: { kind: string; payload: string; queue?: string };
  /** Slices allocated so far, and the children in them. */
  slices: number;
  /** The partitions its slices spread over (lib/store/keys.ts sliceKey); absent: all in the group's own. */
  slicePartitions?: number;
  size: number;
  /** The numbers of the slices whose every child is recorded: ADD to a set is idempotent. */
  doneSlices?: Set<number>;
  createdAt: number;
  /** An unsealed group seals itself, as failed, at this time (ms). */
  sealBy: number;
  sealedAt?: number;
  expired?: boolean;
  failedChild?: { id: string; error: string };
  completionJobId?: string;
  /** A hash of the creating request: the same request again resumes the create, another is a 409. */
  requestHash?: string;
  /** The outcome the completion job was told, and the counts it was given. */
  outcome?: "succeeded" | "failed";
  counts?: { done: number; dead: number; cancelled: number };
  /** The job whose handler created the group (`ctx.group`), and the membership it handed over, if any. */
  parentJobId?: string;
  member?: Member;
  /** The W3C trace context of the group's creation: its children and completion job are spans under it. */
  trace?: string;
  finishedAt?: number;
  /** Times the reaper found the group with nothing moving; its next look backs off with them. */
  stalls?: number;
  expiresAt?: number;
  gsi1pk?: string;
  gsi1sk?: string;
}

/** One slice: up to SLICE_SIZE children, and which positions ended how. */
export interface SliceItem {
  pk: string;
  sk: string;
  groupId: string;
  slice: number;
  ids: string[];
  createdAt: number;
  done?: Set<number>;
  dead?: Set<number>;
  cancelled?: Set<number>;
  /** Written by the reaper for a slice whose writer never came: it holds no children. */
  void?: boolean;
  expiresAt: number;
}

export const recordedStatuses = ["done", "dead", "cancelled"] as const satisfies readonly TerminalStatus[];

export function recordedCount(slice: SliceItem): number {
  return (slice.done?.size ?? 0) + (slice.dead?.size ?? 0) + (slice.cancelled?.size ?? 0);
}

/** A slice's children by status: what GET /groups/{id} adds up over every slice. */
export function sliceCounts(slice: SliceItem) {
  const total = slice.ids.length;
  const done = slice.done?.size ?? 0;
  const dead = slice.dead?.size ?? 0;
  const cancelled = slice.cancelled?.size ?? 0;
  return { total, pending: total - done - dead - cancelled, done, dead, cancelled };
}

export function isSliceComplete(slice: SliceItem): boolean {
  return recordedCount(slice) >= slice.ids.length;
}

/** The recorded status of position p, or undefined while the child runs. */
export function recordedStatus(slice: SliceItem, p: number): TerminalStatus | undefined {
  return recordedStatuses.find((s) => slice[s]?.has(p));
}

export function sliceCount(children: number): number {
  return Math.ceil(children / SLICE_SIZE);
}
