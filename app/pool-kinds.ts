import type { JsonValue } from "../lib/declarations/pool-kind.ts";
import { definePoolKind } from "./define.ts";

/** The key of a py-digest-batch job: its payload's `key` (a throw here is a 400 at enqueue). */
function payloadKey(payload: JsonValue): string {
  const key = typeof payload === "object" && payload !== null && !Array.isArray(payload) ? payload.key : null;
  if (typeof key !== "string") throw new Error("payload.key must be a string: it names the batch");
  return key;
}

/**
 * Heavy kinds run by warm child programs in the Fargate pool (any language; see children/ and the
 * README's child protocol). Adding one is one entry here; an operator can add or override kinds
 * without code through the JSON file named by SKYFORGE_POOL_CONFIG.
 */
export const poolKinds = [
  definePoolKind({ name: "py-digest", argv: ["python3", "children/digest.py"], queue: "heavy" }),
  definePoolKind({ name: "node-digest", argv: ["node", "children/digest.mjs"], queue: "heavy" }),
  // A batch kind on the pool: the jobs of one payload.key gather for up to 2 s (or 20 of them) and go
  // to one Python child in one batch request; each result names its call (batchId, batchSize, index).
  definePoolKind({
    name: "py-digest-batch",
    argv: ["python3", "children/digest.py"],
    queue: "heavy",
    batch: { key: payloadKey, maxSize: 20, maxWaitSeconds: 2, policy: "duration", maxPendingPerKey: 1000 },
  }),
] as const;
