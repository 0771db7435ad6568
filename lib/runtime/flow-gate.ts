import { concurrencyFor, type FlowSettings, rateCells, rateSlot } from "../job/flow.ts";
import { MAX_DELAY_SECONDS } from "../limits.ts";
import { jobFields } from "../observability/log.ts";
import { type FlowKeyState, parkJob, readFlowKey, takeKeyPlace } from "../store/flow-key-ops.ts";
import type { JobSeed } from "../store/job-item.ts";
import { reserveStart } from "../store/rate-limit-ops.ts";
import { seedFromMessage } from "../transport/job-message.ts";
import type { Admitted } from "./delivery.ts";
import { lookAfterParking } from "./flow-places.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/**
 * A delivery that may go on to its claim: the place of its flow key it took, which it gives back if
 * the claim finds the job not to run (a late copy of a finished job's message must not keep one).
 */
export interface FlowPass {
  place?: { kind: string; key: string; since: number };
}

/** The bucket a flow key's rate is kept in: a scope no declared one can be (scope names have no ':'). */
export const flowRateBucket = (kind: string, key: string) => ({ scope: `flow:${kind}`, key });

/**
 * A flow-controlled job's delivery, before its claim (docs/architecture.md §20), in the documented
 * order: its key's cool-down, its key's rate, its key's concurrency. result: undefined to go on to
 * the claim, with the place of its key this delivery took (a redelivery keeps the one it holds);
 * or the Ack of a delivery
 * that waits: hidden until the key cools or its reserved start (false), or parked in its key's line
 * or sent again carrying its start (true: this copy is deleted). No attempt is spent waiting.
 */
export async function passFlowGate(
  deps: WorkerDeps,
  { msg }: Admitted,
  record: InboundRecord,
  visibility: VisibilitySink,
): Promise<Ack | FlowPass> {
  const kind = deps.registry.get(msg.kind);
  const key = msg.flowKey;
  if (!kind?.flow || key === undefined) return {};
  const { store, clock, transport, metrics } = deps;
  const now = clock.now();
  const state = await readFlowKey(store, kind.name, key);
  const hide = async (until: number) => {
    metrics.count("keyWaits", msg.queue, msg.kind);
    await visibility.change(msg.queue, record.receiptHandle, Math.max(1, Math.ceil((until - now) / 1000)));
    return false;
  };
  if (state.coolUntil !== undefined && state.coolUntil > now) return hide(state.coolUntil);
  const { rate } = kind.flow;
  if (rate && msg.rateSlot === undefined) {
    const slot = rateSlot(
      await reserveStart(store, flowRateBucket(kind.name, key), now, rateCells(rate).intervalMs),
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
  if (msg.rateSlot !== undefined && msg.rateSlot > now) return hide(msg.rateSlot);
  return takePlaceOrPark(deps, kind.flow, key, state, seedFromMessage(msg), now);
}

/**
 * The key's concurrency: a place taken (or already held: a redelivery), or the job parked in the
 * key's line when every place is held by a run that may still be going.
 */
async function takePlaceOrPark(
  deps: WorkerDeps,
  flow: FlowSettings<never>,
  key: string,
  state: FlowKeyState,
  seed: JobSeed,
  now: number,
): Promise<Ack | FlowPass> {
  const limit = concurrencyFor(flow, key);
  if (typeof limit !== "number") return {};
  const { store, metrics, log } = deps;
  const kind = seed.kind;
  if (state.holders[seed.id] !== undefined) return {};
  // A full key parks the job at once: places left held by ended runs are the repair's to free
  // (after the parking below, and the reaper's look), not every waiting delivery's to read.
  if (
    Object.keys(state.holders).length < limit &&
    (await takeKeyPlace(store, kind, key, seed.id, limit, now))
  )
    return { place: { kind, key, since: now } };
  if (await parkJob(store, seed, key)) {
    metrics.count("keyParked", seed.queue, seed.kind);
    log.debug("job waits for a place of its flow key", { ...jobFields(seed), flowKey: key });
    await lookAfterParking(deps, kind, key);
    return true;
  }
  // No longer queued (it ran, or was cancelled): the claim decides what this delivery is.
  return {};
}
