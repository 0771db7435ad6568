import type { PoolKindSpec } from "../declarations/pool-kind.ts";
import { jobFields, type Log } from "../observability/log.ts";
import type { WorkerDeps } from "../runtime/record-types.ts";
import type { UnstartedMessages } from "../runtime/unstarted-messages.ts";
import type { JobMessage } from "../transport/job-message.ts";
import { unlaunchableKinds } from "./child-program.ts";
import type { Waiting } from "./intake.ts";

/**
 * A job of a kind this pool refused (its program is missing) goes back to the queue, re-sent with
 * this delay, for a pool that can run it: no attempt is spent and, the message being fresh, no
 * receive count, so the job waits (queued) until the program is installed instead of dying.
 */
const REFUSED_KIND_RECHECK_SECONDS = 300;

/**
 * The kinds whose program can't be started (looked up on `path`, the PATH the children get), with
 * the reason naming kind and program; each is logged once, as the pool starts.
 */
export function refuseUnlaunchable(
  kinds: readonly PoolKindSpec[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
  log: Log,
): ReadonlyMap<string, string> {
  const refused = unlaunchableKinds(kinds, env, cwd);
  for (const reason of refused.values()) {
    log.error(`${reason}; the pool refuses the kind, and its jobs wait in the queue`, {});
  }
  return refused;
}

/** A refused kind's job: a fresh message with a delay, the received one deleted; nothing claimed. */
export async function deferRefused(
  deps: Pick<WorkerDeps, "transport" | "log">,
  unstarted: UnstartedMessages,
  w: Waiting,
  msg: JobMessage,
  reason: string | undefined,
): Promise<void> {
  await unstarted.release(w.record.receiptHandle);
  await deps.transport.send({ message: msg, delaySeconds: REFUSED_KIND_RECHECK_SECONDS });
  await deps.transport.delete(w.queue, w.record.receiptHandle);
  deps.log.warn("deferred a job of a refused kind", {
    ...jobFields(msg),
    reason,
    delaySeconds: REFUSED_KIND_RECHECK_SECONDS,
  });
}
