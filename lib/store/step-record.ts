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
 * - event, match: an event wait's; its data arrives in v or o, and e: the id of the event it took
 *   (so a later wait of the job on the same pair doesn't take a buffered event again).
 * - race: a `waitForAny`'s branches (until: its deadline), and w: the branch that won (its data in v
 *   or o; a timer's none), written once (lib/store/race-ops.ts, or an event's resume).
 * - event, match: an event wait's; its data arrives in v or o.
 * - child: a child job's id (`ctx.invoke`); its outcome (ChildOutcome's JSON) arrives in v or o.
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
  e?: string;
  race?: RaceBranchRecord[];
  w?: string;
  child?: string;
}

/** One branch of a race as its entry keeps it: its name, and its token's id or its event's pair. */
export interface RaceBranchRecord {
  b: string;
  token?: string;
  event?: string;
  match?: string;
  /** A timer's end. */
  until?: number;
}

/** What a suspended job waits for: the item's `waiting`, set by the suspend, removed by the claim. */
export interface WaitingRecord {
  for: "sleep" | "token" | "event" | "any" | "child";
  until: number;
  token?: string;
  event?: string;
  match?: string;
  /** A race's (`for: "any"`) tokens, and its events' pairs (eventPairOf), which a resume's condition finds. */
  tokens?: string[];
  pairs?: string[];
  child?: string;
}

/** An event's name and match as one value, as a race's `waiting.pairs` holds them. */
export const eventPairOf = (event: string, match: string) =>
  `${encodeURIComponent(event)}#${encodeURIComponent(match)}`;

/** A job's inline step results stop here; later ones go to the claims bucket, keeping the item small. */
export const INLINE_STEPS_BYTES = 32 * 1024;

/** Bytes of inline results a job's steps hold. */
export function inlineStepBytes(steps: Readonly<Record<string, StepRecord>> | undefined): number {
  let bytes = 0;
  for (const record of Object.values(steps ?? {})) bytes += record.v ? Buffer.byteLength(record.v) : 0;
  return bytes;
}

/** The child jobs a job's steps invoked (`ctx.invoke`) whose end its steps haven't recorded: those it may wait for. */
export function childrenAwaited(steps: Readonly<Record<string, StepRecord>> | undefined): string[] {
  return Object.values(steps ?? {}).flatMap((r) =>
    r.child !== undefined && r.v === undefined && r.o === undefined ? [r.child] : [],
  );
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toWaitingView(w: WaitingRecord): WaitingView {
  return {
    for: w.for,
    until: iso(w.until),
    ...(w.token !== undefined ? { token: w.token } : {}),
    ...(w.event !== undefined ? { event: w.event, match: w.match ?? "" } : {}),
    ...(w.child !== undefined ? { child: w.child } : {}),
  };
}

/** What call made a record: its own `op`, or for an older record, what its fields say. */
export function stepTypeOf(r: StepRecord): StepType {
  if (r.op !== undefined) return r.op;
  if (r.race !== undefined) return "race";
  if (r.child !== undefined) return "child";
  if (r.event !== undefined) return "event";
  if (r.token !== undefined) return "token";
  if (r.until !== undefined) return "sleep";
  return "step";
}

function statusOf(r: StepRecord, now: number): StepView["status"] {
  const type = stepTypeOf(r);
  if (type === "race" && r.w === undefined) return (r.until ?? 0) > now ? "waiting" : "timed-out";
  if (type === "sleep") return (r.until ?? 0) > now ? "sleeping" : "done";
  if (type === "child" && r.v === undefined && r.o === undefined) return "waiting";
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
        ...(r.op !== undefined ? { place: r.n } : {}),
        ...(r.until !== undefined ? { until: iso(r.until) } : {}),
        ...(r.w !== undefined ? { won: r.w } : {}),
        ...(r.child !== undefined ? { child: r.child } : {}),
        ...(json !== undefined ? { result: JSON.parse(json) } : {}),
      };
    });
}
