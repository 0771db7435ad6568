import * as z from "zod";
import { defineKind } from "../define.ts";

/**
 * Imports one CSV row of `name,email,plan`. A row that can't be read won't read better on a retry,
 * and dropping it would lose a customer: once its attempts run out it pauses for a person, who fixes
 * the row and resumes the job with it (POST /jobs/{id}/resume, `npx skyforge jobs resume ID
 * --payload …`) or cancels it (docs/architecture.md §21).
 */
export const importRow = defineKind({
  name: "import-row",
  payload: z.object({ line: z.string().max(1000) }).strict(),
  queue: "default",
  maxAttempts: 2,
  timeoutSeconds: 30,
  onExhausted: "pause",
  handler: async ({ line }) => {
    const fields = line.split(",").map((f) => f.trim());
    const [name, email, plan] = fields;
    if (fields.length !== 3 || !name || !email?.includes("@") || !plan)
      throw new Error(`row "${line.slice(0, 80)}" is not name,email,plan`);
    return { name, email, plan };
  },
});
