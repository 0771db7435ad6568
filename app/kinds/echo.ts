import * as z from "zod";
import { defineKind } from "../define.ts";

/** The result is the payload. */
export const echo = defineKind({
  name: "echo",
  description: "Answers its payload, any JSON, as its result.",
  payload: z.json(),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 30,
  handler: async (payload) => payload,
});
