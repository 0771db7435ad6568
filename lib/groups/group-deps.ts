import type { Engine } from "../services/engine-services.ts";

/** What group operations use of the engine (docs/architecture.md §15). */
export type GroupDeps = Pick<
  Engine,
  "store" | "producer" | "registry" | "queues" | "clock" | "log" | "metrics"
> &
  Partial<Pick<Engine, "running" | "realtime">>;

/** A sealed group with no slice finished for this long gets the reaper's look (doubling per stall). */
export const GROUP_STALL_MS = 5 * 60_000;
export const GROUP_STALL_MAX_MS = 60 * 60_000;
/** A completing or cancelled group is looked at again after this, in case its writer died. */
export const GROUP_FOLLOW_UP_MS = 2 * 60_000;
/**
 * A child whose job item is still missing this long after its slice was written was never enqueued
 * (its creator died first; a message is never delayed more than 15 minutes): it is recorded dead.
 */
export const LOST_CHILD_AFTER_MS = 20 * 60_000;
/** Slices outlive any group they can belong to; they are a few hundred bytes per 25 children. */
export const SLICE_RETENTION_DAYS = 400;
