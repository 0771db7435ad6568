import { randomBytes } from "node:crypto";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import { type BatchItem, type BatchKindDefinition, checkedOutcomes } from "../job/batch.ts";
import type { AbortCause } from "../job/kind.ts";
import { withFields } from "../observability/log.ts";
import { freeKeySlot, holdKeySlot, takeKeySlot } from "../store/batch-key-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import type { JobMessage } from "../transport/job-message.ts";
import { BacklogTally } from "./backlog-tally.ts";
import { Heartbeat } from "./heartbeat.ts";
import { type Decision, decideOutcome, type RunEnd } from "./outcome.ts";
import type { Delivery, RecordProcessor } from "./process-record.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/** Records of one batch kind and key, in the order they arrived: one call takes up to maxSize of them. */
export interface KeyedRecords {
  kind: BatchKindDefinition;
  key: string;
  records: { record: InboundRecord; msg: JobMessage }[];
}

/** How long a delivery whose key has no free call slot waits before it comes back. */
const KEY_BUSY_RETRY_SECONDS = 2;

/**
 * One handler call for a batch kind's key (docs/architecture.md §18): each record is admitted and
 * claimed under its own fence as a single job would be; the call's items run in one handler call,
 * with a heartbeat each; each item's outcome is finalized alone. A cluster-wide slot of the key
 * (maxKeyConcurrency) is held for the call. result: each record's Ack, by message id.
 */
export async function processKeyedBatch(
  deps: WorkerDeps,
  processor: RecordProcessor,
  group: KeyedRecords,
  visibility: VisibilitySink,
): Promise<Map<string, Ack>> {
  const acks = new Map<string, Ack>();
  const admitted: { record: InboundRecord; msg: JobMessage; queue: QueueDeclaration }[] = [];
  await Promise.all(
    group.records.map(async ({ record, msg }) => {
      const a = await processor.admit(record, msg, visibility);
      if (typeof a === "boolean") acks.set(record.messageId, a);
      else admitted.push({ record, ...a });
    }),
  );
  const first = admitted[0];
  if (!first) return acks;

  const slot = await takeSlot(deps, group, first.queue);
  if (!slot) {
    deps.metrics.count("batchKeyBusy", first.queue.name, group.kind.name);
    for (const { record, queue } of admitted) {
      await visibility.change(queue.name, record.receiptHandle, KEY_BUSY_RETRY_SECONDS);
      acks.set(record.messageId, false);
    }
    return acks;
  }
  const tally = new BacklogTally();
  try {
    const claimed: { item: JobItem; delivery: Delivery }[] = [];
    await Promise.all(
      admitted.map(async ({ record, msg, queue }) => {
        const c = await processor.claimOne(msg, queue, record, visibility);
        if (typeof c === "boolean") acks.set(record.messageId, c);
        else claimed.push(c);
      }),
    );
    // Each item is ready to run, or ends now without running (cancelled, invalid payload...).
    const ready: { item: JobItem; delivery: Delivery; payload: unknown }[] = [];
    await Promise.all(
      claimed.map(async (c) => {
        const r = await processor.prepare(c.item, c.delivery.msg);
        if ("outcome" in r)
          acks.set(c.delivery.record.messageId, await processor.settle(c.item, r, c.delivery, tally));
        else ready.push({ ...c, payload: r.payload });
      }),
    );
    if (ready.length > 0) {
      const decisions = await runCall(deps, group, ready, first.queue, () => slot.renew());
      await Promise.all(
        ready.map(async (r, i) => {
          const decision = decisions[i] as Decision;
          acks.set(r.delivery.record.messageId, await processor.settle(r.item, decision, r.delivery, tally));
        }),
      );
    }
  } finally {
    await slot.free().catch(() => undefined);
    await tally.flush(deps.store).catch((err) =>
      deps.log.warn("could not count a call's ended jobs out of their key's backlog", {
        kind: group.kind.name,
        error: String(err),
      }),
    );
  }
  return acks;
}

interface HeldSlot {
  renew(): Promise<void>;
  free(): Promise<void>;
}

/** One of the key's maxKeyConcurrency slots, held for a lease and renewed with the items' heartbeats. */
async function takeSlot(
  deps: WorkerDeps,
  group: KeyedRecords,
  queue: QueueDeclaration,
): Promise<HeldSlot | undefined> {
  const { store, clock } = deps;
  const kind = group.kind.name;
  const token = randomBytes(12).toString("base64url");
  const leaseMs = queue.leaseSeconds * 1000;
  const slots = group.kind.batch.settings.maxKeyConcurrency ?? 1;
  for (let slot = 0; slot < slots; slot++) {
    if (!(await takeKeySlot(store, kind, group.key, slot, token, clock.now() + leaseMs))) continue;
    return {
      renew: async () => {
        await holdKeySlot(store, kind, group.key, slot, token, clock.now() + leaseMs);
      },
      free: () => freeKeySlot(store, kind, group.key, slot, token),
    };
  }
  return undefined;
}

/**
 * Runs the call: one AbortController per item (its cancel, its lost lease) under one for the call
 * (timeout), a heartbeat per item, and the handler's outcomes mapped to one decision per item. An
 * item aborted alone ends by its cause whatever the handler answered for it.
 */
async function runCall(
  deps: WorkerDeps,
  group: KeyedRecords,
  ready: { item: JobItem; delivery: Delivery; payload: unknown }[],
  queue: QueueDeclaration,
  renewSlot: () => Promise<void>,
): Promise<Decision[]> {
  const { kind, key } = group;
  const { clock, metrics } = deps;
  const call = new AbortController();
  const timeoutSeconds = kind.timeoutSeconds;
  const timer = setTimeout(() => call.abort("timeout" satisfies AbortCause), timeoutSeconds * 1000);
  timer.unref();
  const own = ready.map(() => new AbortController());
  // With every item aborted (each cancelled, or all handed back at shutdown) the call has nothing
  // left to run for: it stops too, which on the pool kills the child mid-call.
  for (const o of own)
    o.signal.addEventListener(
      "abort",
      () => {
        if (own.every((c) => c.signal.aborted)) call.abort(o.signal.reason);
      },
      { once: true },
    );
  const heartbeats = ready.map(
    ({ item, delivery }, i) =>
      new Heartbeat(
        {
          id: item.id,
          queue: item.queue,
          token: delivery.token,
          receiptHandle: delivery.record.receiptHandle,
          leaseMs: delivery.leaseMs,
          leaseUntil: item.leaseUntil ?? clock.now() + delivery.leaseMs,
        },
        deps.store,
        deps.transport,
        (cause) => own[i]?.abort(cause),
        deps.log,
      ),
  );
  const unregister = ready.map(({ item }, i) =>
    deps.running?.register(item.id, (cause) => own[i]?.abort(cause)),
  );
  // The slot is renewed as often as an item's lease, so a long call keeps its place.
  const slotTimer = setInterval(
    () => void renewSlot().catch(() => undefined),
    (queue.leaseSeconds * 1000) / 3,
  );
  slotTimer.unref();
  for (const h of heartbeats) h.start();

  const items: BatchItem<unknown>[] = ready.map(({ item, payload }, i) => ({
    id: item.id,
    attempt: item.attempts,
    payload,
    signal: AbortSignal.any([(own[i] as AbortController).signal, call.signal]),
  }));
  const batchId = randomBytes(8).toString("hex");
  const oldest = Math.min(...ready.map(({ item }) => item.runAt));
  const started = clock.now();
  metrics.count("batchCalls", queue.name, kind.name);
  metrics.size("batchItems", queue.name, kind.name, items.length);
  metrics.time("batchWait", queue.name, kind.name, Math.max(0, started - oldest));
  const log = withFields(deps.log, { kind: kind.name, queue: queue.name, batchKey: key, batchId });

  let ends: RunEnd[];
  try {
    const aborted = new Promise<{ abort: AbortCause }>((resolve) =>
      call.signal.addEventListener("abort", () => resolve({ abort: call.signal.reason as AbortCause }), {
        once: true,
      }),
    );
    const ran = kind.batch
      .handler(items, {
        kind: kind.name,
        queue: queue.name,
        key,
        batchId,
        signal: call.signal,
        log,
        rateLimit: (scope, n) => {
          if (!deps.rateLimiter) throw new Error("no rate limiter is configured for this worker");
          return deps.rateLimiter.acquire(scope, n);
        },
      })
      .then(
        (outcomes) => ({ outcomes: checkedOutcomes(items.length, outcomes) }),
        (error: unknown) => ({ error }),
      );
    const end = await Promise.race([ran, aborted]).catch((error: unknown) => ({ error }));
    ends = items.map((_, i): RunEnd => {
      const cause = own[i]?.signal.reason as AbortCause | undefined;
      if (own[i]?.signal.aborted && cause) return { ok: false, abort: cause };
      if ("abort" in end) return { ok: false, abort: end.abort };
      if ("error" in end) return { ok: false, error: end.error };
      const outcome = end.outcomes[i];
      return outcome instanceof Error ? { ok: false, error: outcome } : { ok: true, value: outcome };
    });
  } finally {
    clearTimeout(timer);
    clearInterval(slotTimer);
    await Promise.all(heartbeats.map((h) => h.stop()));
    for (const u of unregister) u?.();
  }
  metrics.time("runDuration", queue.name, kind.name, clock.now() - started);
  return ends.map((end, i) => {
    const item = (ready[i] as { item: JobItem }).item;
    return decideOutcome(end, {
      attempt: item.attempts,
      maxAttempts: item.maxAttempts,
      backoff: kind.backoff ?? queue.backoff,
      timeoutSeconds,
      ...(deps.random ? { random: deps.random } : {}),
    });
  });
}
