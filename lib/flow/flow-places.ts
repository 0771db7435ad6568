import { loadPayload } from "../claims/job-bodies.ts";
import { concurrencyFor, type FlowLimit, flowLimitNamed, flowLimitsOf } from "../job/flow.ts";
import { encodeFlowKey, type FlowKey, jobKeyFor, parkedLineOf } from "../job/flow-key.ts";
import { isTerminal } from "../job/status.ts";
import {
  type FlowKeyState,
  freeKeyPlaces,
  grantKeyPlace,
  readFlowKeyState,
  renewKeyPlace,
} from "../store/flow-key-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { parkedJobs } from "../store/parked-line-ops.ts";
import { getJob } from "../store/read-ops.ts";
import { messageFromItem } from "../transport/message-from-item.ts";
import type { FlowDeps } from "./flow-deps.ts";

/** What the place bookkeeping uses of the engine. */
export type PlaceDeps = Pick<
  FlowDeps,
  "store" | "claims" | "transport" | "registry" | "queues" | "clock" | "log"
>;

/** Parked jobs looked at per hand-over beyond the key's places (those may hold places on their way). */
export const LINE_LOOK = 5;

/**
 * The limit of its kind a flow key is kept under (`fk.limit`: absent for the kind's first limit),
 * or undefined when the kind declares no such limit (any more).
 */
export function limitOfKey(deps: Pick<PlaceDeps, "registry">, fk: FlowKey): FlowLimit | undefined {
  const limit = flowLimitNamed(deps.registry.get(fk.kind)?.flow, fk.limit);
  return limit !== undefined && (limit.index === 0) === (fk.limit === undefined) ? limit : undefined;
}

/** Whether a kind declares one flow limit (or none): its jobs keep the lone limit's ways. */
function hasLoneLimit(deps: Pick<PlaceDeps, "registry">, kind: string): boolean {
  return flowLimitsOf(deps.registry.get(kind)?.flow).length <= 1;
}

/**
 * Whether a job the line's read shows still waits in this key's line. The line is read from the
 * status index, which lags: a job of several limits may have moved on (to another limit's line, or
 * to wait for a turn as a message), and a place handed to it then would send it a second message. So
 * for such a kind the job's item is read (strong) first; a lone limit's job is taken as read (its
 * only way out of the line is its claim, which a hand-over's condition already sees).
 */
export async function waitsHere(deps: PlaceDeps, fk: FlowKey, job: JobItem): Promise<boolean> {
  if (hasLoneLimit(deps, job.kind)) return true;
  const now = await getJob(deps.store, job.id);
  const line = now?.status === "queued" && now.parked ? parkedLineOf(now) : undefined;
  return line !== undefined && encodeFlowKey(line) === encodeFlowKey(fk);
}

/**
 * A parked (or placed but never started) job's message, sent again, given its place at `since`. It
 * goes through its rates again: its item keeps no turn a rate reserved (a job parked at its enqueue
 * never reserved one), so it takes a turn anew, holding the place it was given while it waits for it;
 * a turn reserved before a job parked goes unused (a rate may be under-used, never overdrawn). A job
 * of several limits' message carries `placeSince`: the gate takes a copy without it for a stale one.
 */
export async function resendJob(deps: PlaceDeps, job: JobItem, since: number): Promise<void> {
  const payload = job.payloadObject ? undefined : await loadPayload(deps.store, deps.claims, job);
  const message = {
    ...messageFromItem(job, payload),
    ...(hasLoneLimit(deps, job.kind) ? {} : { placeSince: since }),
  };
  await deps.transport.send({ message, delaySeconds: 0 });
}

/**
 * Places whose run can't still be going: its job ended, or never got written a lease after its
 * place was given. Freed if still held as read: a place stale then is stale still (its job stays
 * ended, or missing), so a refused free (most often a run that just ended passing its own place on
 * meanwhile) frees the others, rather than leaving a crash's place held until the next look.
 * result: how many were freed.
 */
export async function freeStalePlaces(
  deps: PlaceDeps,
  fk: FlowKey,
  state: FlowKeyState,
  now: number,
): Promise<number> {
  const stale = await stalePlaces(deps, fk, state, now);
  return freePlacesAsHeld(deps, fk, stale, (id, since, holders) =>
    holders[id] === since ? since : undefined,
  );
}

/**
 * Places given back in one write (freeKeyPlaces: each only if still held since the time given).
 * Refused because one of them changed, the key is read again and `heldNow` names the time each is
 * to be freed at (undefined: leave it), and those are freed; tried twice at most.
 * result: how many were freed.
 */
export async function freePlacesAsHeld(
  deps: Pick<PlaceDeps, "store">,
  fk: FlowKey,
  places: Record<string, number>,
  heldNow: (id: string, since: number, holders: FlowKeyState["holders"]) => number | undefined,
): Promise<number> {
  let held = places;
  for (let tries = 0; tries < 2 && Object.keys(held).length > 0; tries++) {
    if (await freeKeyPlaces(deps.store, fk, held)) return Object.keys(held).length;
    const { holders } = await readFlowKeyState(deps.store, fk);
    held = Object.fromEntries(
      Object.entries(held).flatMap(([id, since]) => {
        const at = heldNow(id, since, holders);
        return at === undefined ? [] : [[id, at]];
      }),
    );
  }
  return 0;
}

/**
 * The places held by runs that may still be going (for a view: nothing is freed here): those of
 * ended runs, left held by a crash before their hand-over, are not counted.
 */
export async function livePlaces(
  deps: PlaceDeps,
  fk: FlowKey,
  state: FlowKeyState,
  now: number,
): Promise<number> {
  const stale = await stalePlaces(deps, fk, state, now);
  return Object.keys(state.holders).length - Object.keys(stale).length;
}

/**
 * The lease of the kind's home queue: a place given that long ago to a job that hasn't started was
 * lost, for the repair (the longest of the app's leases for a kind the app doesn't know).
 */
export function placeLeaseMs(deps: Pick<PlaceDeps, "registry" | "queues">, kindName: string): number {
  const home = deps.registry.get(kindName)?.queue;
  const queue = deps.queues.find((q) => q.name === home);
  return (queue ? queue.leaseSeconds : Math.max(...deps.queues.map((q) => q.leaseSeconds))) * 1000;
}

async function stalePlaces(deps: PlaceDeps, fk: FlowKey, state: FlowKeyState, now: number) {
  const leaseMs = placeLeaseMs(deps, fk.kind);
  const stale: Record<string, number> = {};
  const ids = Object.keys(state.holders);
  const jobs = await Promise.all(ids.map((id) => getJob(deps.store, id)));
  ids.forEach((id, i) => {
    const job = jobs[i];
    const since = state.holders[id] as number;
    if (job ? isTerminal(job.status) || jobKeyFor(job, fk) !== fk.key : now - since > leaseMs)
      stale[id] = since;
  });
  return stale;
}

/**
 * The reaper's look at one flow key with parked jobs (lib/flow/flow-heal.ts): places of ended runs
 * are freed, then the key's places are filled (fillPlaces). result: jobs sent.
 */
export async function healKey(deps: PlaceDeps, fk: FlowKey): Promise<number> {
  const limit = limitOf(deps, fk);
  if (limit === undefined) return 0;
  const now = deps.clock.now();
  let state = await readFlowKeyState(deps.store, fk);
  if ((await freeStalePlaces(deps, fk, state, now)) > 0) state = await readFlowKeyState(deps.store, fk);
  return fillPlaces(deps, fk, limit, state, now);
}

/**
 * One look at a key after jobs parked in its line (at delivery, lib/flow/flow-gate.ts, or at
 * enqueue, lib/flow/flow-park.ts): a run that ended meanwhile may have found the line empty and
 * freed its place, or every place may be held by runs that ended without handing on. With a place
 * free, or freed here, the key's places are filled, but for those `coming` will take (jobs of the
 * same enqueue sent to their gates, counted until the state shows them holding).
 */
export async function lookAfterParking(
  deps: PlaceDeps,
  fk: FlowKey,
  coming: readonly string[] = [],
): Promise<void> {
  const limit = limitOf(deps, fk);
  if (limit === undefined) return;
  const now = deps.clock.now();
  let state = await readFlowKeyState(deps.store, fk);
  const onTheirWay = (s: FlowKeyState) => coming.filter((id) => s.holders[id] === undefined).length;
  if (Object.keys(state.holders).length + onTheirWay(state) >= limit) {
    if ((await freeStalePlaces(deps, fk, state, now)) === 0) return;
    state = await readFlowKeyState(deps.store, fk);
  }
  await fillPlaces(deps, fk, limit - onTheirWay(state), state, now);
}

/** The key's concurrency, when its limit bounds one. */
function limitOf(deps: PlaceDeps, fk: FlowKey): number | undefined {
  const flow = limitOfKey(deps, fk);
  const limit = flow ? concurrencyFor(flow.settings, fk.key) : undefined;
  return typeof limit === "number" ? limit : undefined;
}

/**
 * A key's places, as read: a placed job that never started a lease after its place was given (its
 * message lost after the hand-over) is sent again, and free places go to the first parked jobs of
 * its line.
 * result: jobs sent.
 */
async function fillPlaces(
  deps: PlaceDeps,
  fk: FlowKey,
  limit: number,
  state: FlowKeyState,
  now: number,
): Promise<number> {
  const { store } = deps;
  const leaseMs = placeLeaseMs(deps, fk.kind);
  let sent = 0;
  for (const [id, since] of Object.entries(state.holders)) {
    if (now - since <= leaseMs) continue;
    const job = await getJob(store, id);
    if (job?.status !== "queued") continue;
    // Placed, but it hasn't started a lease after: its message went missing. Renew the place, send it.
    if (await renewKeyPlace(store, fk, id, since, now)) {
      await resendJob(deps, job, now);
      sent++;
    }
  }
  let free = limit - Object.keys(state.holders).length;
  for (const next of free > 0 ? await parkedJobs(store, fk, free + LINE_LOOK) : []) {
    if (free <= 0) break;
    if (state.holders[next.id] !== undefined || !(await waitsHere(deps, fk, next))) continue;
    if (!(await grantKeyPlace(store, fk, next.id, limit, now))) break;
    await resendJob(deps, next, now);
    sent++;
    free--;
  }
  return sent;
}
