import { randomBytes } from "node:crypto";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import type { BatchKindDefinition } from "../job/batch.ts";
import { errorFields } from "../observability/log.ts";
import { freeCallPermit, holdCallPermit, takeCallPermit } from "../store/batch-key-ops.ts";
import type { WorkerDeps } from "./record-types.ts";

/** A held place among a batch key's maxKeyConcurrency calls running across the cluster. */
export interface CallPermit {
  /** Renews the permit as often as an item's lease, so a long call keeps its place; returns the stop. */
  keep(): () => void;
  /** Gives the permit back; a failure is logged and the permit lapses at the end of its hold. */
  free(): Promise<void>;
}

/** One of the key's permits, held for a lease; undefined when every one is held by another call. */
export async function takePermit(
  deps: Pick<WorkerDeps, "store" | "clock" | "log">,
  kind: BatchKindDefinition,
  key: string,
  queue: QueueDeclaration,
): Promise<CallPermit | undefined> {
  const { store, clock, log } = deps;
  const token = randomBytes(12).toString("base64url");
  const leaseMs = queue.leaseSeconds * 1000;
  const permits = kind.batch.settings.maxKeyConcurrency ?? 1;
  const fields = { kind: kind.name, batchKey: key };
  for (let permit = 0; permit < permits; permit++) {
    if (!(await takeCallPermit(store, kind.name, key, permit, token, clock.now() + leaseMs))) continue;
    return {
      keep: () => {
        const renew = () =>
          void holdCallPermit(store, kind.name, key, permit, token, clock.now() + leaseMs).catch(
            (error: unknown) =>
              log.warn("could not renew a batch key's call permit; will retry", {
                ...fields,
                ...errorFields(error),
              }),
          );
        const timer = setInterval(renew, leaseMs / 3);
        timer.unref();
        return () => clearInterval(timer);
      },
      free: () =>
        freeCallPermit(store, kind.name, key, permit, token).catch((error: unknown) =>
          log.warn("could not free a batch key's call permit; it lapses after its hold", {
            ...fields,
            ...errorFields(error),
          }),
        ),
    };
  }
  return undefined;
}
