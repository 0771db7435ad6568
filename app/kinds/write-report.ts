import * as z from "zod";
import { defineKind } from "../define.ts";

/**
 * A group's completion job (the fold): reads every child's result page by page and sums the
 * scores. Run as anything but a completion job, it has nothing to fold.
 */
export const writeReport = defineKind({
  name: "write-report",
  payload: z.object({ title: z.string().max(200) }).strict(),
  queue: "default",
  maxAttempts: 3,
  timeoutSeconds: 300,
  handler: async ({ title }, ctx) => {
    const group = ctx.completion;
    if (!group) return { title, rows: 0, total: 0, status: "no group" };
    let total = 0;
    let rows = 0;
    let cursor: string | undefined;
    do {
      const page = await group.children({ status: "done", limit: 100, ...(cursor ? { cursor } : {}) });
      for (const child of page.items) {
        total += (child.result as { score: number }).score;
        rows++;
      }
      cursor = page.cursor;
    } while (cursor);
    ctx.log.info("report written", { groupId: group.groupId, rows, status: group.status });
    return {
      title,
      status: group.status,
      counts: group.counts,
      rows,
      total,
      failedChild: group.failedChild ?? null,
    };
  },
});
