import * as z from "zod";
import { defineKind } from "../define.ts";

/** Always throws, so it ends dead after maxAttempts. */
export const fail = defineKind({
  name: "fail",
  payload: z.object({ message: z.string().max(500).default("failed on purpose") }),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async ({ message }) => {
    throw new Error(message);
  },
});
