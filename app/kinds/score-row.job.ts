import * as z from "zod";
import { UnrecoverableError } from "../../lib/errors.ts";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "score-row" (app/kinds/score-row.ts). */
export default defineJob({
  payload: z.object({ row: z.number().int().min(0), bad: z.boolean().optional() }).strict(),
  handler: async ({ row, bad }) => {
    if (bad) throw new UnrecoverableError(`row ${row} is malformed`);
    return { row, score: (row * 7) % 10 };
  },
});
