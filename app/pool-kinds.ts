import { definePoolKind } from "./define.ts";

/**
 * Heavy kinds run by warm child programs in the Fargate pool (any language; see children/ and the
 * README's child protocol). Adding one is one entry here; an operator can add or override kinds
 * without code through the JSON file named by SKYFORGE_POOL_CONFIG.
 */
export const poolKinds = [
  definePoolKind({ name: "py-digest", argv: ["python3", "children/digest.py"], queue: "heavy" }),
  definePoolKind({ name: "node-digest", argv: ["node", "children/digest.mjs"], queue: "heavy" }),
] as const;
