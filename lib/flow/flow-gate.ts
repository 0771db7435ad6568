import { concurrencyFor, type FlowLimit, flowLimitsOf, rateCells, rateSlot } from "../job/flow.ts";
import { rateInForce } from "../job/flow-adaptive.ts";
import { type FlowKey, flowKeyFields, flowRateBucket, limitKeyOf } from "../job/flow-key.ts";
import { MAX_DELAY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import type { TatMemory } from "../rate-limit/tat-memory.ts";
import type { AdaptedKey, FlowPass, FlowPlace } from "../services/flow-service.ts";
import {
  type FlowKeyState,
  leaveLine,
  parkJob,
  readFlowKeyState,
  renewKeyPlace,
  takeKeyPlace,
} from "../store/flow-key-ops.ts";
import { reserveStart } from "../store/rate-limit-ops.ts";
import { getJob } from "../store/read-ops.ts";
import { type JobMessage, seedFromMessage } from "../transport/job-message.ts";
import type { FlowDeps, FlowRoomDeps } from "./flow-deps.ts";
import { lookAfterParking, placeLeaseMs, resendJob } from "./flow-places.ts";
import { handPlaceOn } from "./hand-over.ts";

/** One of the job's limits as its delivery meets it: the limit, the job's key under it, its state. */
interface Met {
  limit: FlowLimit;
  fk: FlowKey;
  state: FlowKeyState;
}

/**
 * A flow-controlled job's delivery, before its claim (docs/architecture.md §20): each of its kind's
 * limits in declaration order, and in each its key's cool-down, its key's rate, its key's
 * concurrency. A job starts only when every limit admits it. The first limit that refuses it is the
 * one it waits for, and a job that waits holds no place in any limit: those it took or was handed
 * are handed on (lib/flow/hand-over.ts handPlaceOn).
 * result: a FlowPass to go on to the claim, with the places this delivery took (a redelivery keeps
 * those it holds); or the Ack of a delivery that waits: hidden through `hide` until the key cools or
 * its reserved start (false), or parked in the refusing key's line or sent again carrying its
 * reserved starts (true: this copy is deleted). No attempt is spent waiting.
 */
export async function passFlowGate(
  deps: FlowRoomDeps,
  msg: JobMessage,
  hide: (seconds: number) => Promise<void>,
  tats: TatMemory,
): Promise<boolean | FlowPass> {
  const keyed = flowLimitsOf(deps.registry.get(msg.kind)?.flow).flatMap((limit) => {
    const fk = limitKeyOf(msg, limit);
    return fk === undefined ? [] : [{ limit, fk }];
  });
  if (keyed.length === 0) return {};
  const { store, clock, transport, metrics } = deps;
  const now = clock.now();
  const states = await Promise.all(keyed.map(({ fk }) => readFlowKeyState(store, fk)));
  const met: Met[] = keyed.map((k, i) => ({ ...k, state: states[i] as FlowKeyState }));
  const several = met.length > 1;
  const holdsAny = met.some(({ state }) => state.holders[msg.id] !== undefined);
  if (several && holdsAny) {
    const copy = await judgeCopy(deps, msg, met, hide, now);
    if (copy !== undefined) return copy;
    // Sent on from a line: it leaves the line before anything else (one conditional write), so no
    // hand-over sends it a second message while this one decides (two copies could each pass on a
    // place the other gives back). It enters a line again only as its last step, if it parks.
    await leaveLine(store, msg.id);
  }
  const taken: FlowPlace[] = [];
  const adapted: AdaptedKey[] = [];
  // The starts its rates reserved, carried by a message sent again so no rate is taken from twice.
  let carried: JobMessage = msg;
  // A lone limit's job waits holding what it holds (a redelivery of its run), as it always did.
  const giveBack = async () => {
    if (!several) return;
    await Promise.all(
      met.map(({ limit, fk, state }) =>
        state.holders[msg.id] !== undefined || taken.some((p) => p.key === fk)
          ? handPlaceOn(deps, fk, limit, msg.id, true)
          : undefined,
      ),
    );
  };
  // A job of several limits waits for a later limit's cool-down or turn as a message, in no line.
  const waitAsMessage = giveBack;
  const wait = async (until: number) => {
    metrics.count("keyWaits", msg.queue, msg.kind);
    await waitAsMessage();
    await hide(Math.max(1, Math.ceil((until - now) / 1000)));
    return false;
  };

  for (const { limit, fk, state } of met) {
    if (state.coolUntil !== undefined && state.coolUntil > now) return wait(state.coolUntil);
    const declared = limit.settings.rate;
    const rate = declared && rateInForce(declared, state.adaptedRate);
    if (rate && rate !== declared) adapted.push({ key: fk, limit: limit.name, current: rate.limit });
    let slot = slotOf(carried, limit);
    if (rate && slot === undefined) {
      const cost = msg.flowCosts?.[limit.name] ?? 1;
      const { intervalMs } = rateCells(rate);
      const bucket = flowRateBucket(fk);
      const reserved = await reserveStart(store, bucket, now, intervalMs * cost, tats.get(bucket));
      tats.remember(bucket, reserved.tat);
      slot = rateSlot(reserved.before, now, rate, cost);
      carried = withSlot(carried, limit, slot);
      if (slot > now) {
        // Its turn is reserved: it comes back then as a new message that carries it, so it doesn't
        // take from the rate again (one send; this copy is deleted). A turn within half a lease is
        // waited for holding the places it has: given back, a place taken meanwhile would park it
        // at its turn and the turn would go unused (a shared rate under-used). A later turn waits
        // placeless: a place held past the repair's lease (placeLeaseMs) is taken for a lost job's.
        metrics.count("keyWaits", msg.queue, msg.kind);
        if (several && slot - now <= placeLeaseMs(deps, msg.kind) / 2) {
          const since = taken[0]?.since ?? msg.placeSince;
          if (since !== undefined) carried = { ...carried, placeSince: since };
        } else await waitAsMessage();
        const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.ceil((slot - now) / 1000));
        await transport.send({ message: carried, delaySeconds });
        return true;
      }
    }
    if (slot !== undefined && slot > now) return wait(slot);
    const place = await takePlace(deps, limit, fk, state, msg.id, now);
    if (place === "full") return parkIn(deps, msg, fk, giveBack, taken, several);
    if (place) taken.push(place);
  }
  return { ...(taken.length > 0 ? { places: taken } : {}), ...(adapted.length > 0 ? { adapted } : {}) };
}

/** The start a limit's rate reserved for this job, as its message carries it. */
const slotOf = (msg: JobMessage, limit: FlowLimit) =>
  limit.index === 0 ? msg.rateSlot : msg.rateSlots?.[limit.name];

const withSlot = (msg: JobMessage, limit: FlowLimit, slot: number): JobMessage =>
  limit.index === 0
    ? { ...msg, rateSlot: slot }
    : { ...msg, rateSlots: { ...msg.rateSlots, [limit.name]: slot } };

/**
 * A limit's concurrency: a place taken, none needed (no concurrency, or one already held: a
 * redelivery, or a place handed on from the key's line), or "full" when every place is held by a run
 * that may still be going. A full key parks the job at once: places left held by ended runs are the
 * repair's to free (after the parking, and the reaper's look), not every waiting delivery's to read.
 */
async function takePlace(
  deps: FlowDeps,
  limit: FlowLimit,
  fk: FlowKey,
  state: FlowKeyState,
  id: string,
  now: number,
): Promise<FlowPlace | undefined | "full"> {
  const most = concurrencyFor(limit.settings, fk.key);
  if (typeof most !== "number" || state.holders[id] !== undefined) return undefined;
  if (Object.keys(state.holders).length < most && (await takeKeyPlace(deps.store, fk, id, most, now)))
    return { key: fk, since: now };
  return "full";
}

/**
 * The job waits in the line of the key that refused it, and gives back every place it holds in its
 * other limits. result: true (parked: this copy is deleted); or, when the job is no longer queued
 * (it ran, or was cancelled), the places taken so far for the claim to decide with.
 */
async function parkIn(
  deps: FlowDeps,
  msg: JobMessage,
  fk: FlowKey,
  giveBack: () => Promise<unknown>,
  taken: FlowPlace[],
  several: boolean,
): Promise<boolean | FlowPass> {
  const seed = seedFromMessage(msg);
  const pass = taken.length > 0 ? { places: taken } : {};
  if (several) {
    // Its places go back before it enters the line: once in it, a hand-over may send it again, and
    // that copy must not find a place of this one still held, soon to be given away. Not for a job
    // another copy already runs (the places are that run's). A due scheduled job (a durable job
    // whose wait ended) parks as a queued one.
    const status = (await getJob(deps.store, msg.id))?.status;
    if (status !== "queued" && status !== "scheduled") return pass;
    await giveBack();
  }
  if (!(await parkJob(deps.store, seed, fk, deps.clock.now()))) return pass;
  deps.metrics.count("keyParked", seed.queue, seed.kind);
  deps.log.debug("job waits for a place of its flow key", { ...jobFields(seed), ...flowKeyFields(fk) });
  await lookAfterParking(deps, fk);
  return true;
}

/**
 * A copy of a job of several limits that holds places. Of a job that already runs (a redelivery, a
 * duplicate): the claim decides, as for a lone limit's, and its gate must not give the run's places
 * back ({}). Of a queued job: its own when it was sent with the place it holds (`placeSince`: go on,
 * undefined). Another copy (one a fault kept from being deleted) must not go beside that one: two
 * copies at once could each pass on places the other gives back to wait. While the places are young
 * it waits two leases (hidden); once they are older the copy sent with them was lost, so the places
 * are renewed (of two copies, one renews) and the job is sent afresh with them, and this copy dropped.
 */
async function judgeCopy(
  deps: FlowDeps,
  msg: JobMessage,
  met: readonly Met[],
  hide: (seconds: number) => Promise<void>,
  now: number,
): Promise<boolean | FlowPass | undefined> {
  const job = await getJob(deps.store, msg.id);
  if (job?.status !== "queued") return {};
  const held = met.flatMap(({ fk, state }) => {
    const since = state.holders[msg.id];
    return since === undefined ? [] : [{ fk, since }];
  });
  if (msg.placeSince !== undefined && held.some(({ since }) => since === msg.placeSince)) return undefined;
  deps.metrics.count("duplicateDeliveries", msg.queue, msg.kind);
  const leaseMs = jobQueueLeaseMs(deps, msg);
  if (held.some(({ since }) => since > now - 2 * leaseMs)) {
    await hide(Math.ceil((2 * leaseMs) / 1000));
    return false;
  }
  const renewed = await Promise.all(
    held.map(({ fk, since }) => renewKeyPlace(deps.store, fk, msg.id, since, now)),
  );
  if (renewed.every(Boolean)) await resendJob(deps, job, now);
  return true;
}

/** The lease of the queue the job runs on (an enqueue may choose one other than its kind's), in ms. */
const jobQueueLeaseMs = (deps: FlowDeps, msg: JobMessage) =>
  (deps.queues.find((q) => q.name === msg.queue)?.leaseSeconds ?? 60) * 1000;
