import * as z from "zod";
import { UnrecoverableError } from "../../lib/errors.ts";
import { defineKind } from "../define.ts";

/** One row of a fan-out: its score, or an error for a row marked bad (it dies at once, no retry). */
export const scoreRow = defineKind({
  name: "score-row",
  payload: z.object({ row: z.number().int().min(0), bad: z.boolean().optional() }).strict(),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ row, bad }) => {
    if (bad) throw new UnrecoverableError(`row ${row} is malformed`);
    return { row, score: (row * 7) % 10 };
  },
});
