import { issuesOf } from "../errors.ts";
import type { AnyKind } from "../job/kind.ts";
import { kindReady } from "../job/kind-loading.ts";
import type { KindRegistry } from "../job/registry.ts";
import type { JobItem } from "../store/job-item.ts";
import type { Decision } from "./outcome.ts";

/** The start of a dead job's lastError when its start deadline passed (docs/architecture.md §4). */
export const START_DEADLINE_PASSED = "start deadline passed";

/**
 * The kind and validated payload to run with, or the reason to end the job without running it: a
 * cancel already requested, its start deadline passed, an unknown kind, no attempts left, a payload
 * gone from the claims bucket, one that is not JSON or fails the kind's schema. None of these is
 * retried. `payload` is asked for only once nothing else ends the job, so a job that won't run
 * costs no read of a claim-checked payload. A kind whose module loads on first use loads here; a
 * module that fails to load fails the attempt as a handler's error would (`loadFailed` decides,
 * with the kind's and queue's backoff), and the next job of the kind tries the load again.
 */
export async function precheckRun(
  registry: KindRegistry,
  item: Pick<JobItem, "kind" | "attempts" | "maxAttempts" | "cancelRequested" | "startBy" | "runAt">,
  payload: () => Promise<string | readonly string[] | undefined>,
  now: number,
  loadFailed: (kind: AnyKind, err: unknown) => Decision,
): Promise<Decision | { kind: AnyKind; payload: unknown }> {
  if (item.cancelRequested) return { outcome: "cancelled", error: "cancelled on request" };
  // A retry is a start too: the deadline holds for every attempt, and a retry doesn't move it.
  if (item.startBy !== undefined && now > item.startBy) {
    const within = Math.round((item.startBy - item.runAt) / 1000);
    return {
      outcome: "dead",
      error: `${START_DEADLINE_PASSED}: not started within ${within} s of being due`,
      unstarted: true,
    };
  }
  const declared = registry.get(item.kind);
  if (!declared) return { outcome: "dead", error: `unknown kind "${item.kind}"` };
  if (item.attempts > item.maxAttempts) {
    return {
      outcome: "dead",
      error: `no attempts left (${item.maxAttempts}); the last runs lost their lease`,
      exhausted: true,
    };
  }
  let kind: AnyKind;
  try {
    kind = await kindReady(declared);
  } catch (err) {
    return loadFailed(declared, err);
  }
  const payloadJson = await payload();
  if (payloadJson === undefined)
    return { outcome: "dead", error: "payload expired: the job waited longer than its queue keeps it" };
  // A collect kind's handler takes its burst's payloads; a burst of one is its message's payload.
  if (kind.debounce?.mode === "collect") {
    const payloads: unknown[] = [];
    for (const one of typeof payloadJson === "string" ? [payloadJson] : payloadJson) {
      const checked = checkedPayload(kind, one);
      if ("outcome" in checked) return checked;
      payloads.push(checked.payload);
    }
    return { kind, payload: payloads };
  }
  if (typeof payloadJson !== "string")
    return { outcome: "dead", error: "invalid payload: a burst for a kind that doesn't collect" };
  const checked = checkedPayload(kind, payloadJson);
  return "outcome" in checked ? checked : { kind, payload: checked.payload };
}

/** One payload's JSON, parsed and checked against its kind's schema; a failure ends the job dead. */
function checkedPayload(kind: AnyKind, payloadJson: string): Decision | { payload: unknown } {
  let json: unknown;
  try {
    json = JSON.parse(payloadJson);
  } catch {
    return { outcome: "dead", error: "invalid payload: not JSON" };
  }
  const parsed = kind.payload.safeParse(json);
  if (!parsed.success) {
    const detail = issuesOf(parsed.error)
      .map((i) => `${i.path}: ${i.message}`)
      .join("; ");
    return { outcome: "dead", error: `invalid payload: ${detail}`.slice(0, 500) };
  }
  return { payload: parsed.data };
}
