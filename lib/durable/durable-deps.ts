import type { JournalLimits } from "../job/journal-bounds.ts";
import type { Engine } from "../services/engine-services.ts";

/** What durable steps use of the engine (lib/engine.ts wires them). */
export type DurableDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "queues" | "clock" | "metrics" | "app" | "producer" | "registry"
> &
  Partial<Pick<Engine, "realtime">> & {
    /**
     * The API's base URL a token's url starts with, read when a token is made (the local stack learns
     * its API's url after the engine is built); a bare path when there is none.
     */
    tokenUrlBase: () => string | undefined;
    /** The journal's bounds (JOURNAL_LIMITS unless a test injects smaller ones). */
    journalLimits?: JournalLimits;
  };
