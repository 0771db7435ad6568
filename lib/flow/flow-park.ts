import { concurrencyFor, flowLimitNamed, flowLimitsOf } from "../job/flow.ts";
import { encodeFlowKey, type FlowKey, flowKeyFields, limitKeyOf, parkedLineOf } from "../job/flow-key.ts";
import { agedArrival } from "../job/priority.ts";
import { errorFields } from "../observability/log.ts";
import type { ParkableJob } from "../services/flow-service.ts";
import { readFlowKeyState } from "../store/flow-key-ops.ts";
import { parkIndexKeys } from "../store/keys.ts";
import type { FlowDeps } from "./flow-deps.ts";
import { lookAfterParking, type PlaceDeps } from "./flow-places.ts";

/**
 * Flow-controlled jobs whose key is full when they are enqueued wait in its line from the start
 * (docs/architecture.md §20): their item is written parked and no message goes out until a place
 * frees. So a flooded key's backlog never sits in the queue ahead of other keys' jobs, and a job
 * that waits costs no send, receive or park beyond its own item write. A job of several limits parks
 * in the line of its first limit (in declaration order) whose key is full; a rate doesn't park at
 * enqueue (its turn is reserved at delivery). One strong read per key of the request. A job due
 * later (a delay) goes through the delivery's gate instead. The request's own jobs count: of a call
 * of 100 jobs for a key with 2 free places, the first 2 are sent and 98 parked here, rather than 98
 * messages that would each park at their delivery (a receive and a write more each).
 */
export async function parkIfKeyFull(
  deps: Pick<FlowDeps, "store" | "registry" | "metrics">,
  planned: readonly ParkableJob[],
) {
  const due = planned.filter((p) => p.item.flowKey !== undefined && p.delaySeconds === 0 && !p.scheduled);
  // Each job's bounded keys, in its limits' order, each with its concurrency.
  const bounded = due.map((p) =>
    flowLimitsOf(deps.registry.get(p.item.kind)?.flow).flatMap((limit) => {
      const fk = limitKeyOf(p.item, limit);
      const most = fk === undefined ? undefined : concurrencyFor(limit.settings, fk.key);
      return fk !== undefined && typeof most === "number" ? [{ fk, most }] : [];
    }),
  );
  const keys = new Map(bounded.flat().map(({ fk }) => [encodeFlowKey(fk), fk] as const));
  const held = new Map(
    await Promise.all(
      [...keys].map(
        async ([text, fk]) =>
          [text, Object.keys((await readFlowKeyState(deps.store, fk)).holders).length] as const,
      ),
    ),
  );
  // The places go by aged arrival (a stable sort: the call's order among equals), so a call's
  // priority-5 jobs are the ones sent.
  const inLine = due
    .map((p, i) => ({ p, keysOfJob: bounded[i] ?? [], at: agedArrival(p.item.createdAt, p.item.priority) }))
    .sort((x, y) => x.at - y.at);
  for (const { p, keysOfJob } of inLine) {
    const full = keysOfJob.find(({ fk, most }) => (held.get(encodeFlowKey(fk)) ?? 0) >= most)?.fk;
    if (full === undefined) {
      // Sent: it will take a place in each of its keys at its delivery.
      for (const { fk } of keysOfJob) held.set(encodeFlowKey(fk), (held.get(encodeFlowKey(fk)) ?? 0) + 1);
      continue;
    }
    deps.metrics.count("keyParked", p.item.queue, full.kind);
    p.parked = true;
    p.writesItem = true;
    p.item = {
      ...p.item,
      parked: true,
      ...lineFields(full),
      ...parkIndexKeys(full, p.item),
    };
  }
}

/** Which limit's line a parked item is in: `parkedIn`, for any limit but its kind's first. */
const lineFields = (fk: FlowKey) => (fk.limit === undefined ? {} : { parkedIn: fk.limit });

/**
 * After parked items are written: one look per key (lookAfterParking, as the gate does after it
 * parks a delivery). The request's jobs that were sent (`sent`) are on their way to a place of
 * their keys: the look leaves those places to them, or each would park at its delivery. A failure is
 * logged: the reaper's look comes within a minute, and the jobs are parked, not lost.
 */
export async function lookAfterParkingAll(
  deps: PlaceDeps,
  parked: readonly ParkableJob[],
  sent: readonly ParkableJob[],
): Promise<void> {
  const keys = new Map(
    parked.flatMap((p) => {
      const fk = parkedLineOf(p.item);
      return fk === undefined ? [] : [[encodeFlowKey(fk), fk] as const];
    }),
  );
  const comingTo = (fk: FlowKey) =>
    sent.flatMap((p) => {
      const limit = flowLimitNamed(deps.registry.get(p.item.kind)?.flow, fk.limit);
      const mine = limit === undefined ? undefined : limitKeyOf(p.item, limit);
      return mine !== undefined && encodeFlowKey(mine) === encodeFlowKey(fk) ? [p.item.id] : [];
    });
  await Promise.all(
    [...keys.values()].map((fk) =>
      lookAfterParking(deps, fk, comingTo(fk)).catch((error: unknown) =>
        deps.log.warn("could not look at a flow key after parking; the reaper will", {
          ...flowKeyFields(fk),
          ...errorFields(error),
        }),
      ),
    ),
  );
}
