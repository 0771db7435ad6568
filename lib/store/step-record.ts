import type { StepType, StepView, WaitingView } from "../job/durable.ts";

/**
 * One recorded step of a durable job, an entry of the job item's `steps` map under its name
 * (docs/architecture.md §22). Short attribute names: the map rides in the job item, which every
 * claim, heartbeat and finalize rewrites, and DynamoDB bills writes by the KB.
 * - n: its place in the handler's order (the count of calls the run had met, this one included);
 *   a: the attempt that recorded it; t: when (ms).
 * - op: the call that made it (a step, a sleep...). Absent: a record written before journal checks
 *   (lib/durable/journal.ts), whose type is read from its fields and whose n, for steps side by
 *   side, may be a later place than its call's: a replay checks its type, not its place.
 * - v: the result's JSON inline, or o: the key of its claims object (over 8 KiB, or once the job's
 *   inline steps fill INLINE_STEPS_BYTES).
 * - until: a sleep's end, or a wait's timeout. token: a token step's id (its result is the token).
 * - event, match: an event wait's; its data arrives in v or o.
 */
export interface StepRecord {
  n: number;
  op?: StepType;
  a: number;
  t: number;
  v?: string;
  o?: string;
  until?: number;
  token?: string;
  event?: string;
  match?: string;
}

/** What a suspended job waits for: the item's `waiting`, set by the suspend, removed by the claim. */
export interface WaitingRecord {
  for: "sleep" | "token" | "event";
  until: number;
  token?: string;
  event?: string;
  match?: string;
}

/** A job's inline step results stop here; later ones go to the claims bucket, keeping the item small. */
export const INLINE_STEPS_BYTES = 32 * 1024;

/** Bytes of inline results a job's steps hold. */
export function inlineStepBytes(steps: Readonly<Record<string, StepRecord>> | undefined): number {
  let bytes = 0;
  for (const record of Object.values(steps ?? {})) bytes += record.v ? Buffer.byteLength(record.v) : 0;
  return bytes;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toWaitingView(w: WaitingRecord): WaitingView {
  return {
    for: w.for,
    until: iso(w.until),
    ...(w.token !== undefined ? { token: w.token } : {}),
    ...(w.event !== undefined ? { event: w.event, match: w.match ?? "" } : {}),
  };
}

/** What call made a record: its own `op`, or for an older record, what its fields say. */
export function stepTypeOf(r: StepRecord): StepType {
  if (r.op !== undefined) return r.op;
  if (r.event !== undefined) return "event";
  if (r.token !== undefined) return "token";
  if (r.until !== undefined) return "sleep";
  return "step";
}

function statusOf(r: StepRecord, now: number): StepView["status"] {
  const type = stepTypeOf(r);
  if (type === "sleep") return (r.until ?? 0) > now ? "sleeping" : "done";
  if (type === "event" && r.v === undefined && r.o === undefined)
    return (r.until ?? 0) > now ? "waiting" : "timed-out";
  return "done";
}

/**
 * A job's steps in the handler's order. `results`: each step's result JSON by name, where the
 * caller loaded the ones in the claims bucket.
 */
export function toStepViews(
  steps: Readonly<Record<string, StepRecord>> | undefined,
  now: number,
  results: ReadonlyMap<string, string | undefined> = new Map(),
): StepView[] {
  return Object.entries(steps ?? {})
    .sort(([, x], [, y]) => x.n - y.n || x.t - y.t)
    .map(([name, r]) => {
      const json = results.get(name) ?? r.v;
      return {
        name,
        type: stepTypeOf(r),
        status: statusOf(r, now),
        attempt: r.a,
        at: iso(r.t),
        ...(r.until !== undefined ? { until: iso(r.until) } : {}),
        ...(json !== undefined ? { result: JSON.parse(json) } : {}),
      };
    });
}
