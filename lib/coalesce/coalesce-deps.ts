import type { Engine } from "../services/engine-services.ts";

/** What coalescing uses of the engine (docs/architecture.md §19). */
export type CoalesceDeps = Pick<Engine, "store" | "queues" | "clock" | "metrics" | "log"> &
  Partial<Pick<Engine, "running">>;
