import { describe, expect, it } from "vitest";
import { subscribe } from "../../client/realtime.ts";
import type { RealtimeEvent } from "../../lib/job/realtime-wire.ts";
import { withinMs } from "../support/wait.ts";
import { faultScenarios, report } from "./support.ts";

/**
 * Realtime under the fault suite (docs/architecture.md §25): the whole stack SIGKILLed while an
 * `llm-echo` job streams, then started again on its data directory. The subscriber's connection dies
 * with it; it resumes with the token it had (the secret is kept in the data directory) and `from`
 * the last chunk it saw, and gets every chunk once, in order, then the end: the run that replaces
 * the killed one writes the same chunks at the same places first, which are neither kept nor sent
 * again.
 */
const scenario = faultScenarios();
const WORDS = 60;

describe("fault: a stack kill mid-stream", () => {
  it("a resuming subscriber gets every chunk once, in order, after the restart", async () => {
    await scenario("realtime-kill", async (stack) => {
      const text = Array.from({ length: WORDS }, (_, i) => `w${i + 1}`).join(" ");
      const created = await stack.call("POST", "/jobs", { kind: "llm-echo", payload: { text, delayMs: 50 } });
      const id = created.body.id as string;
      const first = await stack.call("POST", `/jobs/${id}/subscriptions`, {});
      const { token } = first.body as { token: string };
      const seen: [number, unknown][] = [];
      let lastSeq = 0;
      const take = (event: RealtimeEvent) => {
        if (event.type === "stream" && !event.closed) {
          seen.push([event.seq, event.chunk]);
          lastSeq = event.seq;
        }
      };
      let killed: { killedAt: number } | undefined;
      const beforeKill = withinMs(
        (async () => {
          try {
            for await (const event of subscribe({ url: first.body.url, token })) {
              take(event);
              if (lastSeq === 15 && !killed) killed = await stack.killAll();
            }
          } catch {
            // The connection died with the stack: what the subscriber resumes from.
          }
        })(),
        "the first subscription to end with the stack",
        30_000,
      );
      await beforeKill;
      expect(killed).toBeDefined();
      const seenBeforeRestart = seen.length;
      await stack.restart();
      // The broker's port may change with the restart (PORT=0): the new url, the old token.
      const again = await stack.call("POST", `/jobs/${id}/subscriptions`, {});
      const events: RealtimeEvent[] = [];
      await withinMs(
        (async () => {
          for await (const event of subscribe({ url: again.body.url, token, from: lastSeq })) {
            take(event);
            events.push(event);
          }
        })(),
        "the resumed subscription to reach the job's end",
        90_000,
      );
      expect(seen).toEqual(Array.from({ length: WORDS }, (_, i) => [i + 1, `w${i + 1}`]));
      expect(events.at(-1)).toMatchObject({ type: "end", status: "done" });
      const job = await stack.call("GET", `/jobs/${id}`);
      expect(job.body.attempts).toBeGreaterThanOrEqual(2);
      report("realtime-kill", { seenBeforeRestart, attempts: job.body.attempts, chunks: seen.length });
    });
  }, 240_000);
});
