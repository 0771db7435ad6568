import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import { defineKind } from "../define.ts";

/**
 * A stand-in for a model's streamed answer (docs/guide/realtime.md): the words of `text`, one chunk
 * each on `ctx.stream("tokens")`, `delayMs` apart; the result is the text and how many chunks it took.
 */
export const llmEcho = defineKind({
  name: "llm-echo",
  payload: z.object({
    text: z.string().max(4_000),
    delayMs: z.number().int().min(0).max(1_000).optional(),
  }),
  queue: "default",
  maxAttempts: 3,
  // 2 000 one-letter words 1 s apart would take over half an hour: a run is bounded at 5 minutes.
  timeoutSeconds: 300,
  handler: async ({ text, delayMs = 0 }, ctx) => {
    const out = ctx.stream("tokens");
    const words = text.split(/\s+/).filter((word) => word.length > 0);
    for (const [i, word] of words.entries()) {
      if (i > 0 && delayMs > 0) await delay(delayMs, undefined, { signal: ctx.signal });
      await out.write(word);
    }
    await out.close();
    return { text, chunks: words.length };
  },
});
