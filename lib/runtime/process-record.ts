import type { AnyKind } from "../job/kind.ts";
import { endRunSpan, failSpan, inSpan, runSpan, traceOfSpan } from "../observability/tracing.ts";
import { type JobMessage, parseJobMessage } from "../transport/job-message.ts";
import { Admission } from "./admission.ts";
import { runPayload } from "./claim-check.ts";
import { claimDelivery } from "./claim-delivery.ts";
import type { Claimed, DeliverySteps } from "./delivery.ts";
import { handlerContext } from "./handler-context.ts";
import type { Decision } from "./outcome.ts";
import { precheckRun } from "./precheck.ts";
import { type KeyedRecords, runKeyedBatch } from "./process-batch.ts";
import type { Ack, InboundRecord, WorkerDeps } from "./record-types.ts";
import { decideRun, JobWatch, leaseOf, loadFailure, superviseJob } from "./run-supervisor.ts";
import { settleClaimed } from "./settle-claimed.ts";
import { immediateVisibility, type VisibilitySink } from "./visibility-changes.ts";

/**
 * One SQS record, start to end: defer if the queue cools down → claim → validate → run under the
 * run supervisor (lease kept, timeout, cancel) → finalize → settle the message. Every path either
 * finishes the job, hands it back to SQS with a precise visibility, or leaves it to whoever owns it
 * now; none runs a handler twice. A batch kind's key goes through the same steps per record, with
 * one handler call for all (processKeyedBatch).
 */
export class RecordProcessor {
  private readonly steps: DeliverySteps;

  /** Where visibility changes go when the caller batches none (the pool: each message ends alone). */
  private readonly immediate: VisibilitySink;

  private readonly deps: WorkerDeps;

  constructor(deps: WorkerDeps) {
    this.deps = deps;
    this.immediate = immediateVisibility(deps.transport);
    const admission = new Admission(deps);
    this.steps = {
      admit: (record, msg, visibility) => admission.admit(record, msg, visibility),
      claim: (admitted, record, visibility) => claimDelivery(deps, admitted, record, visibility),
      // The payload is read after the claim, so a duplicate delivery that loses it costs no GET.
      prepare: ({ item, delivery }) =>
        precheckRun(
          deps.registry,
          item,
          () => runPayload(deps.claims, item, delivery.msg),
          deps.clock.now(),
          (kind, error) => loadFailure(deps, item, kind, error, delivery.queue.backoff),
        ),
      settle: (claimed, decision, tally) =>
        settleClaimed(
          deps,
          claimed,
          decision,
          (now, delaySeconds) => admission.throttle(claimed.delivery.msg, now, delaySeconds),
          tally,
        ),
    };
  }

  /** `msg`: the body already parsed by a caller that needed it first (the worker, to group its holds). */
  async process(
    record: InboundRecord,
    msg: JobMessage | undefined = parseJobMessage(record.body),
    visibility: VisibilitySink = this.immediate,
  ): Promise<Ack> {
    const admitted = await this.steps.admit(record, msg, visibility);
    if (typeof admitted === "boolean") return admitted;
    const claimed = await this.steps.claim(admitted, record, visibility);
    if (typeof claimed === "boolean") return claimed;
    const started = this.deps.clock.now();
    // The attempt's span, under the job's stored trace (docs/architecture.md §23).
    const span = runSpan(claimed.item);
    let decision: Decision;
    try {
      const ready = await this.steps.prepare(claimed);
      decision =
        "outcome" in ready
          ? ready
          : await inSpan(span, () => this.run(claimed, ready.kind, ready.payload, traceOfSpan(span)));
    } catch (err) {
      failSpan(span, err);
      span.end();
      throw err;
    }
    endRunSpan(span, decision);
    const { item } = claimed;
    this.deps.metrics.time("runDuration", item.queue, item.kind, this.deps.clock.now() - started);
    return this.steps.settle(claimed, decision);
  }

  /**
   * One handler call for a batch kind's key (docs/architecture.md §18), its records taken through
   * the same steps as a single one. result: each record's Ack, by message id.
   */
  processKeyedBatch(keyed: KeyedRecords, visibility: VisibilitySink): Promise<Map<string, Ack>> {
    return runKeyedBatch(this.deps, this.steps, keyed, visibility);
  }

  /** `runTrace`: the attempt span's context, which the handler's follow-ups and groups are made under. */
  private async run(
    { item, delivery }: Claimed,
    kind: AnyKind,
    payload: unknown,
    runTrace: string | undefined,
  ): Promise<Decision> {
    const watch = new JobWatch(this.deps, item.id, leaseOf({ item, delivery }, this.deps.clock.now()));
    const timeoutSeconds = item.timeoutSeconds ?? kind.timeoutSeconds;
    // Read under the watch, like the run: a failed read ends the watch and fails the delivery.
    const completion = item.completes
      ? await this.deps.groups.completionFor(item).catch(async (err: unknown) => {
          await watch.stop();
          throw err;
        })
      : undefined;
    const traced = runTrace === undefined ? item : { ...item, trace: runTrace };
    // Its steps' spans go under the attempt's (docs/architecture.md §23).
    const durable = this.deps.durable.openRun(
      traced,
      delivery.fence,
      () => watch.live(),
      delivery.queue.retentionDays,
    );
    const ctx = handlerContext(
      this.deps,
      traced,
      delivery.fence,
      watch.keepAlive,
      completion,
      durable.context,
    );
    // A sleep or wait ends the run with its Suspension: the handler's call is left unfinished.
    const end = await superviseJob(
      watch,
      (signal) => Promise.race([kind.handler(payload, { ...ctx, signal }), durable.suspended]),
      timeoutSeconds * 1000,
    );
    const run = { attempt: item.attempts, maxAttempts: item.maxAttempts, timeoutSeconds };
    return decideRun(this.deps, end, run, { kind: kind.backoff, queue: delivery.queue.backoff });
  }
}
