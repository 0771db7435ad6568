import * as z from "zod";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "import-row" (app/kinds/import-row.ts). */
export default defineJob({
  payload: z.object({ line: z.string().max(1000) }).strict(),
  handler: async ({ line }) => {
    const fields = line.split(",").map((f) => f.trim());
    const [name, email, plan] = fields;
    if (fields.length !== 3 || !name || !email?.includes("@") || !plan)
      throw new Error(`row "${line.slice(0, 80)}" is not name,email,plan`);
    return { name, email, plan };
  },
});
