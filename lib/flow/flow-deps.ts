import type { Engine } from "../services/engine-services.ts";

/** What flow control uses of the engine (lib/flow/flow-service.ts is given these by lib/engine.ts). */
export type FlowDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "registry" | "queues" | "clock" | "metrics" | "log"
>;
