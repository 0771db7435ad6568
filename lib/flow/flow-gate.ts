import { concurrencyFor, type FlowSettings, rateCells, rateSlot } from "../job/flow.ts";
import { type FlowKey, flowKeyFields, flowKeyOf, flowRateBucket } from "../job/flow-key.ts";
import { MAX_DELAY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import type { FlowPass } from "../services/flow-service.ts";
import { type FlowKeyState, parkJob, readFlowKeyState, takeKeyPlace } from "../store/flow-key-ops.ts";
import type { JobSeed } from "../store/job-item.ts";
import { reserveStart } from "../store/rate-limit-ops.ts";
import { type JobMessage, seedFromMessage } from "../transport/job-message.ts";
import type { FlowDeps } from "./flow-deps.ts";
import { lookAfterParking } from "./flow-places.ts";

/**
 * A flow-controlled job's delivery, before its claim (docs/architecture.md §20), in the documented
 * order: its key's cool-down, its key's rate, its key's concurrency. result: a FlowPass to go on to
 * the claim, with the place of its key this delivery took (a redelivery keeps the one it holds);
 * or the Ack of a delivery that waits: hidden through `hide` until the key cools or its reserved
 * start (false), or parked in its key's line or sent again carrying its start (true: this copy is
 * deleted). No attempt is spent waiting.
 */
export async function passFlowGate(
  deps: FlowDeps,
  msg: JobMessage,
  hide: (seconds: number) => Promise<void>,
): Promise<boolean | FlowPass> {
  const fk = flowKeyOf(msg);
  const flow = fk === undefined ? undefined : deps.registry.get(fk.kind)?.flow;
  if (!flow || fk === undefined) return {};
  const { store, clock, transport, metrics } = deps;
  const now = clock.now();
  const state = await readFlowKeyState(store, fk);
  const wait = async (until: number) => {
    metrics.count("keyWaits", msg.queue, msg.kind);
    await hide(Math.max(1, Math.ceil((until - now) / 1000)));
    return false;
  };
  if (state.coolUntil !== undefined && state.coolUntil > now) return wait(state.coolUntil);
  const { rate } = flow;
  if (rate && msg.rateSlot === undefined) {
    const slot = rateSlot(
      await reserveStart(store, flowRateBucket(fk), now, rateCells(rate).intervalMs),
      now,
      rate,
    );
    if (slot > now) {
      // Its turn is reserved: it comes back then as a new message that carries it, so it doesn't
      // take from the rate again (one send; this copy is deleted).
      metrics.count("keyWaits", msg.queue, msg.kind);
      const delaySeconds = Math.min(MAX_DELAY_SECONDS, Math.ceil((slot - now) / 1000));
      await transport.send({ message: { ...msg, rateSlot: slot }, delaySeconds });
      return true;
    }
  }
  if (msg.rateSlot !== undefined && msg.rateSlot > now) return wait(msg.rateSlot);
  return takePlaceOrPark(deps, flow, fk, state, seedFromMessage(msg), now);
}

/**
 * The key's concurrency: a place taken (or already held: a redelivery), or the job parked in the
 * key's line when every place is held by a run that may still be going.
 */
async function takePlaceOrPark(
  deps: FlowDeps,
  flow: FlowSettings<never>,
  fk: FlowKey,
  state: FlowKeyState,
  seed: JobSeed,
  now: number,
): Promise<boolean | FlowPass> {
  const limit = concurrencyFor(flow, fk.key);
  if (typeof limit !== "number") return {};
  const { store, metrics, log } = deps;
  if (state.holders[seed.id] !== undefined) return {};
  // A full key parks the job at once: places left held by ended runs are the repair's to free
  // (after the parking below, and the reaper's look), not every waiting delivery's to read.
  if (Object.keys(state.holders).length < limit && (await takeKeyPlace(store, fk, seed.id, limit, now)))
    return { place: { key: fk, since: now } };
  if (await parkJob(store, seed, fk)) {
    metrics.count("keyParked", seed.queue, seed.kind);
    log.debug("job waits for a place of its flow key", { ...jobFields(seed), ...flowKeyFields(fk) });
    await lookAfterParking(deps, fk);
    return true;
  }
  // No longer queued (it ran, or was cancelled): the claim decides what this delivery is.
  return {};
}
