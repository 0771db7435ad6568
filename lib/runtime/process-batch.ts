import { randomBytes } from "node:crypto";
import type { QueueDeclaration } from "../declarations/queue-declaration.ts";
import {
  type BatchContext,
  type BatchItem,
  type BatchKindDefinition,
  checkedOutcomes,
} from "../job/batch.ts";
import { errorFields, withFields } from "../observability/log.ts";
import { endRunSpan, endSpan, runSpan } from "../observability/tracing.ts";
import type { JobMessage } from "../transport/job-message.ts";
import { BacklogTally } from "./backlog-tally.ts";
import { type CallPermit, takePermit } from "./call-permit.ts";
import type { Admitted, Claimed, DeliverySteps } from "./delivery.ts";
import { rateLimitOf } from "./handler-context.ts";
import type { Decision, RunEnd } from "./outcome.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import { decideRun, JobWatch, leaseOf, superviseRun } from "./run-supervisor.ts";
import type { VisibilitySink } from "./visibility-changes.ts";

/** Records of one batch kind and key, in the order they arrived: one call takes up to maxSize of them. */
export interface KeyedRecords {
  kind: BatchKindDefinition;
  key: string;
  records: { record: InboundRecord; msg: JobMessage }[];
}

/** How long a delivery whose key has no free call permit waits before it comes back. */
const KEY_BUSY_RETRY_SECONDS = 2;

type Ready = Claimed & { payload: unknown };

/**
 * The pool's way in (lib/pool/key-call.ts), kept with its signature: the processor's own
 * processKeyedBatch, which takes the records through its delivery steps.
 */
export function processKeyedBatch(
  _deps: WorkerDeps,
  processor: {
    processKeyedBatch(keyed: KeyedRecords, visibility: VisibilitySink): Promise<Map<string, Ack>>;
  },
  keyed: KeyedRecords,
  visibility: VisibilitySink,
): Promise<Map<string, Ack>> {
  return processor.processKeyedBatch(keyed, visibility);
}

/**
 * One handler call for a batch kind's key (docs/architecture.md §18): each record is admitted and
 * claimed under its own fence as a single job would be; the call's items run in one handler call,
 * each watched by the run supervisor; each item's outcome is finalized alone. One of the key's
 * cluster-wide call permits (maxKeyConcurrency) is held for the call. result: each record's Ack.
 */
export async function runKeyedBatch(
  deps: WorkerDeps,
  steps: DeliverySteps,
  keyed: KeyedRecords,
  visibility: VisibilitySink,
): Promise<Map<string, Ack>> {
  const acks = new Map<string, Ack>();
  const admitted: (Admitted & { record: InboundRecord })[] = [];
  await Promise.all(
    keyed.records.map(async ({ record, msg }) => {
      const a = await steps.admit(record, msg, visibility);
      if (typeof a === "boolean") acks.set(record.messageId, a);
      else admitted.push({ record, ...a });
    }),
  );
  const first = admitted[0];
  if (!first) return acks;

  const permit = await takePermit(deps, keyed.kind, keyed.key, first.queue);
  if (!permit) {
    deps.metrics.count("batchKeyBusy", first.queue.name, keyed.kind.name);
    for (const { record, queue } of admitted) {
      await visibility.change(queue.name, record.receiptHandle, KEY_BUSY_RETRY_SECONDS);
      acks.set(record.messageId, false);
    }
    return acks;
  }
  const tally = new BacklogTally();
  const settle = async (c: Claimed, decision: Decision) =>
    acks.set(c.delivery.record.messageId, await steps.settle(c, decision, tally));
  try {
    const claimed: Claimed[] = [];
    await Promise.all(
      admitted.map(async ({ record, ...a }) => {
        const c = await steps.claim(a, record, visibility);
        if (typeof c === "boolean") acks.set(record.messageId, c);
        else claimed.push(c);
      }),
    );
    // Each item is ready to run, or ends now without running (cancelled, invalid payload...).
    const ready: Ready[] = [];
    await Promise.all(
      claimed.map(async (c) => {
        const r = await steps.prepare(c);
        if ("outcome" in r) await settle(c, r);
        else ready.push({ ...c, payload: r.payload });
      }),
    );
    if (ready.length > 0) {
      // Each item's attempt is a span of its own job's trace, all over the one call (§23).
      const spans = ready.map((r) => runSpan(r.item));
      const decisions = await runCall(deps, keyed, ready, first.queue, permit).catch((err: unknown) => {
        for (const span of spans) endSpan(span, err);
        throw err;
      });
      spans.forEach((span, i) => {
        endRunSpan(span, decisions[i] as Decision);
      });
      await Promise.all(ready.map((r, i) => settle(r, decisions[i] as Decision)));
    }
  } finally {
    await permit.free();
    await tally.flush(deps.store).catch((error: unknown) =>
      deps.log.warn("could not count a call's ended jobs out of their key's backlog", {
        kind: keyed.kind.name,
        ...errorFields(error),
      }),
    );
  }
  return acks;
}

/**
 * Runs the call under the run supervisor: a watch per item (its lease, its cancel) and the call's
 * own abort (the timeout, or every item aborted). An item aborted alone ends by its cause whatever
 * the handler answered for it.
 */
async function runCall(
  deps: WorkerDeps,
  { kind, key }: KeyedRecords,
  ready: readonly Ready[],
  queue: QueueDeclaration,
  permit: CallPermit,
): Promise<Decision[]> {
  const { clock } = deps;
  const watches = ready.map((r) => new JobWatch(deps, r.item.id, leaseOf(r, clock.now())));
  const call = new AbortController();
  abortWhenEveryItemIs(watches, call);
  const stopKeeping = permit.keep();
  const items: BatchItem<unknown>[] = ready.map(({ item, payload }, i) => ({
    id: item.id,
    attempt: item.attempts,
    payload,
    signal: AbortSignal.any([(watches[i] as JobWatch).signal, call.signal]),
  }));
  const started = clock.now();
  const context = callContext(deps, { kind, key }, queue, ready, call.signal);
  let ends: RunEnd[];
  try {
    const end = await superviseRun(
      async () => checkedOutcomes(items.length, await kind.batch.handler(items, context)),
      call,
      kind.timeoutSeconds * 1000,
    );
    ends = watches.map((w, i) => itemEnd(end, w, i));
  } finally {
    stopKeeping();
    await Promise.all(watches.map((w) => w.stop()));
  }
  deps.metrics.time("runDuration", queue.name, kind.name, clock.now() - started);
  return ends.map((end, i) => {
    const { item } = ready[i] as Ready;
    const run = {
      attempt: item.attempts,
      maxAttempts: item.maxAttempts,
      timeoutSeconds: kind.timeoutSeconds,
    };
    return decideRun(deps, end, run, { kind: kind.backoff, queue: queue.backoff });
  });
}

/**
 * With every item aborted (each cancelled, or all handed back at shutdown) the call has nothing left
 * to run for: it stops too, which on the pool kills the child mid-call.
 */
function abortWhenEveryItemIs(watches: readonly JobWatch[], call: AbortController): void {
  for (const w of watches)
    w.signal.addEventListener(
      "abort",
      () => {
        if (watches.every((o) => o.cause)) call.abort(w.cause);
      },
      { once: true },
    );
}

/** The call's context for the handler (its log stamped with the call's id), and the call's metrics. */
function callContext(
  deps: WorkerDeps,
  { kind, key }: Pick<KeyedRecords, "kind" | "key">,
  queue: QueueDeclaration,
  ready: readonly Ready[],
  signal: AbortSignal,
): BatchContext {
  const batchId = randomBytes(8).toString("hex");
  const oldest = Math.min(...ready.map((r) => r.item.runAt));
  deps.metrics.count("batchCalls", queue.name, kind.name);
  deps.metrics.size("batchItems", queue.name, kind.name, ready.length);
  deps.metrics.time("batchWait", queue.name, kind.name, Math.max(0, deps.clock.now() - oldest));
  const log = withFields(deps.log, { kind: kind.name, queue: queue.name, batchKey: key, batchId });
  return { kind: kind.name, queue: queue.name, key, batchId, signal, log, rateLimit: rateLimitOf(deps) };
}

/** One item's end of the call: its own abort first, then the call's end, then its own outcome. */
function itemEnd(end: RunEnd, watch: JobWatch, i: number): RunEnd {
  if (watch.cause) return { ok: false, abort: watch.cause };
  if (!end.ok) return end;
  const outcome = (end.value as unknown[])[i];
  return outcome instanceof Error ? { ok: false, error: outcome } : { ok: true, value: outcome };
}
