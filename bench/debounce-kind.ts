import * as z from "zod";
import { app } from "../app/index.ts";
import { type App, defineApp } from "../lib/declarations/define-app.ts";
import { defineUnboundKind } from "../lib/job/kind.ts";
import { noopKind } from "./noop-kind.ts";

/**
 * The bench's debounce scenario (docs/architecture.md §19): a no-op trailing debounce kind keyed by
 * its payload's `key`. Not the app's doc-index: its 2 s period and 10 s maximum delay would make the
 * scenario wait longer for nothing, and its handler returns a result, so its price would hold a
 * stored result's bytes rather than debounce's own requests (as bench-noop keeps the matrix's).
 * A 1 s period still spans a burst of enqueues sent back to back; a 5 s maximum delay, far under
 * the `default` queue's maxReceiveCount in periods (the validator's bound). Bench-only, never deployed.
 */
export const BENCH_DEBOUNCE_KIND = "bench-debounce";
export const BENCH_DEBOUNCE_QUEUE = "default";
export const DEBOUNCE_PERIOD_SECONDS = 1;
export const DEBOUNCE_MAX_DELAY_SECONDS = 5;

export const DebouncePayload = z.object({ key: z.string().min(1), seq: z.number(), pad: z.string() });

/** The kind; `onRun` is told of every handler call (a run), so the bench counts them itself. */
export function debounceKind(onRun: () => void) {
  return defineUnboundKind({
    name: BENCH_DEBOUNCE_KIND,
    payload: DebouncePayload,
    queue: BENCH_DEBOUNCE_QUEUE,
    maxAttempts: 3,
    timeoutSeconds: 30,
    debounce: {
      key: (p) => p.key,
      periodSeconds: DEBOUNCE_PERIOD_SECONDS,
      maxDelaySeconds: DEBOUNCE_MAX_DELAY_SECONDS,
      mode: "trailing",
    },
    handler: async () => {
      onRun();
      return null;
    },
  });
}

/** The app with the debounce kind and the no-op kind (the plain job it is compared with) added. */
export const debounceBenchApp = (onRun: () => void): App =>
  defineApp({ ...app, kinds: [...app.kinds, noopKind, debounceKind(onRun)] });
