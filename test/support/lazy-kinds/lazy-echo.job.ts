import * as z from "zod";
import { jobBuilder, type UnboundApp } from "../../../lib/declarations/define-app.ts";

/** Counted when this module is evaluated: a kind's module loads once per process. */
export const evaluations = { count: 0 };
evaluations.count++;

/** A lazily loaded kind's module: its schema and handler (test/integration/kind-loading.test.ts). */
export default jobBuilder<UnboundApp>()({
  payload: z.object({ word: z.string().min(1) }).strict(),
  handler: async ({ word }) => ({ echoed: word }),
});
