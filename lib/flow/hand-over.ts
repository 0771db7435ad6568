import { concurrencyFor, type FlowLimit, flowLimitsOf } from "../job/flow.ts";
import { encodeFlowKey, type FlowKey, flowKeyFields, limitKeyOf } from "../job/flow-key.ts";
import { errorFields } from "../observability/log.ts";
import { type FlowKeyState, type PlacePass, passKeyPlaces, readFlowKeyState } from "../store/flow-key-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { parkedJobs } from "../store/parked-line-ops.ts";
import type { FlowRoomDeps } from "./flow-deps.ts";
import {
  freePlacesAsHeld,
  LINE_LOOK,
  lookAfterParking,
  type PlaceDeps,
  resendJob,
  waitsHere,
} from "./flow-places.ts";
import type { HandOverEntry } from "./hand-over-turns.ts";

/** A hand-over's deps: the place bookkeeping's, and this process's turns of each key's hand-overs. */
export type HandOverDeps = PlaceDeps & Pick<FlowRoomDeps, "handOvers">;

/**
 * A flow-controlled job's run ended (any outcome its owner wrote: done, dead, cancelled, a retry's
 * wait, a throttle, a hand-back): in every limit of its kind with a concurrency, its place goes to
 * the first parked job of the key's line, whose message is sent again, or back to the key
 * when none waits.
 */
export async function leaveKeyPlace(deps: HandOverDeps, item: JobItem): Promise<void> {
  const limits = flowLimitsOf(deps.registry.get(item.kind)?.flow);
  await Promise.all(
    limits.map((limit) => {
      const fk = limitKeyOf(item, limit);
      return fk === undefined ? undefined : handPlaceOn(deps, fk, limit, item.id);
    }),
  );
}

/**
 * A job gives its place in one key back (its run ended, or it waits for another of its limits): the
 * place goes to the first parked job of the key's line, whose message is sent again, or back to the
 * key when none waits. Hand-overs of the key in this process take turns, and those that come while
 * one reads join its write (lib/flow/hand-over-turns.ts). A failure is logged: the reaper's look at
 * the parked jobs (lib/flow/flow-heal.ts) finds a place left held by an ended run. A place given
 * back is followed by one more read of the line: a job that parked between the line's first read
 * and the free looked at the key while the place was still held, and left it. `waiting`: the job
 * gives it back to wait, not because its run ended; a job that parked in this key's line meanwhile
 * saw the place held by a job that hasn't ended (not one to free), so once freed the key is looked
 * at again.
 */
export async function handPlaceOn(
  deps: HandOverDeps,
  fk: FlowKey,
  flow: FlowLimit,
  id: string,
  waiting = false,
): Promise<void> {
  if (!flow.settings.concurrency) return;
  await deps.handOvers.take(encodeFlowKey(fk), { id, waiting }, (first, joiners) =>
    handOver(deps, fk, flow, first, joiners),
  );
}

/** One hand-over of places in `fk`: `first`'s, and those of the entries that joined it. */
async function handOver(
  deps: PlaceDeps,
  fk: FlowKey,
  flow: FlowLimit,
  first: HandOverEntry,
  joiners: () => HandOverEntry[],
): Promise<void> {
  const { store, clock, log } = deps;
  try {
    const limit = concurrencyFor(flow.settings, fk.key);
    const look = (typeof limit === "number" ? limit : 0) + LINE_LOOK;
    // The key's state is read after the line, just before the pass: another process's pass that
    // lands in between is seen (read first, the line's query tripled that window). The line's head
    // may hold places already (on their way to their claims): those are skipped.
    const line = await parkedJobs(store, fk, look);
    let state = await readFlowKeyState(store, fk);
    const all = oneEntryAJob([first, ...joiners()]);
    // An entry that joined while the state was read may hold a place taken after that read (a
    // gate's give-back of a place it had just taken): the state is read again for it.
    if (all.some((e) => state.holders[e.id] === undefined)) state = await readFlowKeyState(store, fk);
    let givers = all.filter((e) => state.holders[e.id] !== undefined);
    const waits = new Map<string, boolean>();
    for (let tries = 0; givers.length > 0 && tries <= line.length; tries++) {
      const passes = await pairUp(deps, fk, line, state, givers, waits);
      if (passes.length === 0) break;
      const at = clock.now();
      if (await passKeyPlaces(store, fk, passes, at)) {
        // A send that fails leaves a placed job without its message: the repair's (fillPlaces) to
        // send it again once its place is a lease old. The givers left are freed whatever came of it.
        const sends = await Promise.allSettled(passes.map((p) => resendJob(deps, p.job, at)));
        for (const sent of sends)
          if (sent.status === "rejected")
            log.warn("could not send a job handed a flow key's place; the reaper will", {
              ...flowKeyFields(fk),
              ...errorFields(sent.reason),
            });
        givers = givers.filter((e) => !passes.some((p) => p.from === e.id));
        break;
      }
      // Lost: a giver held no place any more, or a job got one meanwhile.
      state = await readFlowKeyState(store, fk);
      givers = givers.filter((e) => state.holders[e.id] !== undefined);
    }
    // No one (more) waits for these: their places go back to the key.
    if (givers.length === 0 || !(await freeHeld(deps, fk, givers, state))) return;
    // A job that parked after the line's read and looked at the key before this free saw it full
    // and left it: the line is read once more (a place freed with no one waiting costs that query).
    if (all.some((e) => e.waiting) || (await parkedJobs(store, fk, 1)).length > 0)
      await lookAfterParking(deps, fk);
  } catch (error) {
    log.warn("could not hand a flow key's place on; the reaper will", {
      ...flowKeyFields(fk),
      ...errorFields(error),
    });
  }
}

/**
 * The givers' places back to the key, each if still held as read. Refused (one of them changed: the
 * reaper freed it, another process passed it), the state is read again and those still held are
 * freed. result: whether places were freed.
 */
async function freeHeld(
  deps: PlaceDeps,
  fk: FlowKey,
  givers: readonly HandOverEntry[],
  read: FlowKeyState,
): Promise<boolean> {
  const held = givers.flatMap((e) => {
    const since = read.holders[e.id];
    return since === undefined ? [] : [[e.id, since] as const];
  });
  return (await freePlacesAsHeld(deps, fk, Object.fromEntries(held), (id, _, holders) => holders[id])) > 0;
}

/**
 * The line's first waiting jobs that hold no place, one to each giver in turn. `waits` keeps what
 * was learnt of a job's line (a read for a kind of several limits) across the tries.
 */
async function pairUp(
  deps: PlaceDeps,
  fk: FlowKey,
  line: readonly JobItem[],
  state: FlowKeyState,
  givers: readonly HandOverEntry[],
  waits: Map<string, boolean>,
): Promise<(PlacePass & { job: JobItem })[]> {
  const passes: (PlacePass & { job: JobItem })[] = [];
  for (const next of line) {
    const giver = givers[passes.length];
    if (giver === undefined) break;
    if (givers.some((e) => e.id === next.id) || state.holders[next.id] !== undefined) continue;
    const here = waits.get(next.id) ?? (await waitsHere(deps, fk, next));
    waits.set(next.id, here);
    if (here) passes.push({ from: giver.id, to: next.id, job: next });
  }
  return passes;
}

/**
 * One entry a job (a second hand-over of the same run, after a duplicate finalize, may join the
 * first): one write can't name a holder twice. Waiting if any of its entries is.
 */
function oneEntryAJob(entries: readonly HandOverEntry[]): HandOverEntry[] {
  const byId = new Map<string, HandOverEntry>();
  for (const e of entries)
    byId.set(e.id, { id: e.id, waiting: e.waiting || byId.get(e.id)?.waiting === true });
  return [...byId.values()];
}
