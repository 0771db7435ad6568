import type { AbortCause, AnyKind, JobContext } from "../job/kind.ts";
import type { RunEnd } from "./outcome.ts";

/**
 * Runs a handler until it settles or the run is aborted (cancel, lost lease, timeout), whichever is
 * first. A handler that ignores its signal is left behind: the outcome is decided without it.
 */
export async function runHandler(
  kind: AnyKind,
  payload: unknown,
  ctx: Omit<JobContext, "signal">,
  controller: AbortController,
  timeoutMs: number,
): Promise<RunEnd> {
  const timer = setTimeout(() => controller.abort("timeout" satisfies AbortCause), timeoutMs);
  timer.unref();
  const aborted = new Promise<RunEnd>((resolve) => {
    const onAbort = () => resolve({ ok: false, abort: controller.signal.reason as AbortCause });
    if (controller.signal.aborted) onAbort();
    else controller.signal.addEventListener("abort", onAbort, { once: true });
  });
  const ran = (async (): Promise<RunEnd> => {
    try {
      return { ok: true, value: await kind.handler(payload, { ...ctx, signal: controller.signal }) };
    } catch (error) {
      return { ok: false, error };
    }
  })();
  try {
    return await Promise.race([ran, aborted]);
  } finally {
    clearTimeout(timer);
  }
}
