import * as z from "zod";
import { defineKind } from "../define.ts";

/**
 * Fans out from inside a handler: one `score-row` per row, folded by `write-report`. A retry of this
 * job gets the same group back (one per job and step), so the rows are scored once.
 */
export const scoreAll = defineKind({
  name: "score-all",
  payload: z
    .object({
      rows: z.number().int().min(1).max(1000),
      badRows: z.array(z.number().int().min(0)).max(1000).default([]),
      failure: z.enum(["continue", "terminate"]).default("continue"),
    })
    .strict(),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 60,
  handler: async ({ rows, badRows, failure }, ctx) => {
    const bad = new Set(badRows);
    const group = await ctx.group({
      children: Array.from({ length: rows }, (_, row) => ({
        kind: "score-row" as const,
        payload: bad.has(row) ? { row, bad: true } : { row },
      })),
      onComplete: { kind: "write-report", payload: { title: `scores of ${rows} rows` } },
      failure,
    });
    return { groupId: group.id, children: group.counts.total };
  },
});
