import * as z from "zod";
import { defineUnboundKind } from "../lib/job/kind.ts";

/**
 * The scale model's debounced kind (docs/guide/scale.md, scripts/bench-heat-flow.ts): a trailing
 * debounce per document under a flow limit per tenant, as the guide's timeline of a debounced kind
 * under flow (docs/guide/flow-control.md): a burst of one document's revisions runs once, and one
 * tenant's runs go one at a time. Not the app's doc-index: its 2 s period and 10 s maximum delay
 * would make the scenario wait for nothing, and it declares no flow. Its 1 s period still spans a
 * burst sent back to back; its 5 s maximum delay closes a long burst's job and starts the next, as a
 * key under a steady stream of enqueues sees. Bench-only, never deployed.
 */
export const HEAT_DEBOUNCE_FLOW_KIND = "heat-debounce-flow";

const Revision = z.object({
  doc: z.string().min(1),
  tenant: z.string().min(1),
  seq: z.number(),
  pad: z.string(),
});

export const heatDebounceFlowKind = defineUnboundKind({
  name: HEAT_DEBOUNCE_FLOW_KIND,
  payload: Revision,
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  debounce: { key: (p) => p.doc, periodSeconds: 1, maxDelaySeconds: 5, mode: "trailing" },
  flow: { name: "tenant", key: (p) => p.tenant, concurrency: 1 },
  handler: async () => null,
});
