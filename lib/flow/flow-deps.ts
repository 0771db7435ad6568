import type { Engine } from "../services/engine-services.ts";
import type { HandOverTurns } from "./hand-over-turns.ts";

/** What flow control uses of the engine (lib/flow/flow-service.ts is given these by lib/engine.ts). */
export type FlowDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "registry" | "queues" | "clock" | "metrics" | "log"
>;

/** Flow control's deps and what its service keeps for this process (lib/flow/flow-service.ts). */
export type FlowRoomDeps = FlowDeps & {
  /** Hand-overs of one key in this process, one after another. */
  handOvers: HandOverTurns;
};
