import * as z from "zod";
import { defineJob } from "../define.ts";

/** The schema and handler of the kind "fail" (app/kinds/fail.ts). */
export default defineJob({
  payload: z.object({ message: z.string().max(500).default("failed on purpose") }),
  handler: async ({ message }) => {
    throw new Error(message);
  },
});
