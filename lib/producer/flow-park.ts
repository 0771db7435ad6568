import { concurrencyFor } from "../job/flow.ts";
import { errorFields } from "../observability/log.ts";
import { lookAfterParking, type PlaceDeps } from "../runtime/flow-places.ts";
import type { Engine } from "../services/engine-services.ts";
import { readFlowKey } from "../store/flow-key-ops.ts";
import { parkIndexKeys } from "../store/keys.ts";
import type { Planned } from "./plan.ts";

/**
 * Flow-controlled jobs whose key is full when they are enqueued wait in its line from the start
 * (docs/architecture.md §20): their item is written parked and no message goes out until a place
 * frees. So a flooded key's backlog never sits in the queue ahead of other keys' jobs, and a job
 * that waits costs no send, receive or park beyond its own item write. One strong read per key of
 * the request. A job due later (a delay) goes through the delivery's gate instead.
 */
export async function parkIfKeyFull(
  deps: Pick<PlaceDeps, "store" | "registry"> & Pick<Engine, "metrics">,
  planned: readonly Planned[],
) {
  const keyed = planned.filter((p) => p.item.flowKey !== undefined && p.delaySeconds === 0 && !p.scheduled);
  const byKey = Map.groupBy(keyed, (p) => `${p.item.kind}#${p.item.flowKey}`);
  await Promise.all(
    [...byKey.values()].map(async (same) => {
      const { kind, flowKey } = same[0]?.item ?? {};
      const flow = kind === undefined ? undefined : deps.registry.get(kind)?.flow;
      if (!flow || kind === undefined || flowKey === undefined) return;
      const limit = concurrencyFor(flow, flowKey);
      if (typeof limit !== "number") return;
      const state = await readFlowKey(deps.store, kind, flowKey);
      if (Object.keys(state.holders).length < limit) return;
      for (const p of same) {
        deps.metrics.count("keyParked", p.item.queue, kind);
        p.parked = true;
        p.writesItem = true;
        p.item = { ...p.item, parked: true, ...parkIndexKeys(kind, flowKey, p.item.createdAt, p.item.id) };
      }
    }),
  );
}

/**
 * After parked items are written: one look per key (lookAfterParking, as the gate does after it
 * parks a delivery). A failure is logged: the reaper's look comes within a minute, and the jobs are
 * parked, not lost.
 */
export async function lookAfterParkingAll(deps: PlaceDeps, parked: readonly Planned[]): Promise<void> {
  const keys = new Map(parked.map((p) => [`${p.item.kind}#${p.item.flowKey}`, p.item]));
  await Promise.all(
    [...keys.values()].map(async ({ kind, flowKey }) => {
      if (flowKey === undefined) return;
      await lookAfterParking(deps, kind, flowKey).catch((error: unknown) =>
        deps.log.warn("could not look at a flow key after parking; the reaper will", {
          kind,
          flowKey,
          ...errorFields(error),
        }),
      );
    }),
  );
}
