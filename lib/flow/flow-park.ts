import { concurrencyFor } from "../job/flow.ts";
import { encodeFlowKey, flowKeyFields, flowKeyOf } from "../job/flow-key.ts";
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
 * that waits costs no send, receive or park beyond its own item write. One strong read per key of
 * the request. A job due later (a delay) goes through the delivery's gate instead.
 */
export async function parkIfKeyFull(
  deps: Pick<FlowDeps, "store" | "registry" | "metrics">,
  planned: readonly ParkableJob[],
) {
  const keyed = planned.filter((p) => p.item.flowKey !== undefined && p.delaySeconds === 0 && !p.scheduled);
  const byKey = Map.groupBy(keyed, (p) => encodeFlowKey({ kind: p.item.kind, key: p.item.flowKey ?? "" }));
  await Promise.all(
    [...byKey.values()].map(async (same) => {
      const fk = same[0] && flowKeyOf(same[0].item);
      const flow = fk === undefined ? undefined : deps.registry.get(fk.kind)?.flow;
      if (!flow || fk === undefined) return;
      const limit = concurrencyFor(flow, fk.key);
      if (typeof limit !== "number") return;
      const state = await readFlowKeyState(deps.store, fk);
      if (Object.keys(state.holders).length < limit) return;
      for (const p of same) {
        deps.metrics.count("keyParked", p.item.queue, fk.kind);
        p.parked = true;
        p.writesItem = true;
        p.item = { ...p.item, parked: true, ...parkIndexKeys(fk, p.item.createdAt, p.item.id) };
      }
    }),
  );
}

/**
 * After parked items are written: one look per key (lookAfterParking, as the gate does after it
 * parks a delivery). A failure is logged: the reaper's look comes within a minute, and the jobs are
 * parked, not lost.
 */
export async function lookAfterParkingAll(deps: PlaceDeps, parked: readonly ParkableJob[]): Promise<void> {
  const keys = new Map(
    parked.flatMap((p) => {
      const fk = flowKeyOf(p.item);
      return fk === undefined ? [] : [[encodeFlowKey(fk), fk] as const];
    }),
  );
  await Promise.all(
    [...keys.values()].map((fk) =>
      lookAfterParking(deps, fk).catch((error: unknown) =>
        deps.log.warn("could not look at a flow key after parking; the reaper will", {
          ...flowKeyFields(fk),
          ...errorFields(error),
        }),
      ),
    ),
  );
}
