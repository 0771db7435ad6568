import * as z from "zod";
import { defineUnboundKind } from "../lib/job/kind.ts";

/** The bench's group completion kind: it notes when its handler began, and what it was told. */
export const COMPLETION_KIND = "bench-group-done";

export interface CompletionStart {
  groupId: string;
  jobId: string;
  /** Date.now() as the handler began (the job item's startedAt is the claim, a little earlier). */
  handlerStartedAt: number;
  status: "succeeded" | "failed";
  done: number;
}

/** A completion kind that hands each start to `onStart` (the bench keeps them in memory). */
export function recordingCompletionKind(onStart: (start: CompletionStart) => void) {
  return defineUnboundKind({
    name: COMPLETION_KIND,
    payload: z.json(),
    queue: "default",
    maxAttempts: 3,
    timeoutSeconds: 30,
    handler: async (_payload, ctx) => {
      const handlerStartedAt = Date.now();
      const completion = ctx.completion;
      if (!completion) throw new Error(`${COMPLETION_KIND} runs only as a group's completion job`);
      const { groupId, status, counts } = completion;
      onStart({ groupId, jobId: ctx.job.id, handlerStartedAt, status, done: counts.done });
      return { groupId, status, done: counts.done };
    },
  });
}
