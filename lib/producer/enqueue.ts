import type { Span } from "@opentelemetry/api";
import pLimit from "p-limit";
import { InvariantError } from "../errors.ts";
import type { BatchResultItem, EnqueueResult } from "../job/schemas.ts";
import { endSpan, enqueueSpan, withEnqueueSpan, withTraceOf } from "../observability/tracing.ts";
import type { CoalesceTarget } from "../services/coalesce-service.ts";
import type { CheckedEnqueue, Engine, EnqueueOptions } from "../services/engine-services.ts";
import { toJobView } from "../store/job-item.ts";
import { errorBody } from "./error-body.ts";
import { plan } from "./plan.ts";
import type { Submission, WriteOrderDeps } from "./submission.ts";
import { kindsReadyFor, loadKindsOf, validateEnqueue } from "./validate.ts";
import { submit } from "./write-order.ts";

export type ProducerDeps = Pick<
  Engine,
  "store" | "claims" | "transport" | "registry" | "queues" | "clock" | "metrics" | "log" | "flow" | "coalesce"
> &
  Partial<Pick<Engine, "running" | "realtime">>;

/** Debounced and singleton keys of one batch worked on at once. */
const KEYS_AT_ONCE = 16;

type Checked = CheckedEnqueue | { error: NonNullable<BatchResultItem["error"]> };

/**
 * Enqueue: validate, plan, then the one write order (lib/producer/write-order.ts) that can't lose a
 * job. A single enqueue is a batch of one, sent alone; a batch shares its sends. A debounced or
 * singleton job is the same path with its coalesce key taken at the reserve (docs/architecture.md §19).
 */
export class Producer {
  private readonly deps: WriteOrderDeps;

  constructor(deps: ProducerDeps) {
    this.deps = deps;
  }

  async enqueue(raw: unknown, options: EnqueueOptions = {}): Promise<EnqueueResult> {
    await kindsReadyFor(this.deps.registry, [raw]);
    const valid = validateEnqueue(raw, this.deps.registry, this.deps.queues);
    return withEnqueueSpan(valid.kind.name, valid.queue.name, options.job, async (job, span) => {
      const target = this.deps.coalesce.targetOf(valid, job);
      const planned = plan(valid, this.deps.clock.now(), this.deps.store.layout.indexShards, job);
      span.setAttribute("skyforge.job.id", planned.item.id);
      const entry: Submission = { planned, queue: valid.queue, ...(target ? { target } : {}) };
      if (options.uniqueKeyScope) entry.uniqueKeyScope = options.uniqueKeyScope;
      await submit(this.deps, [entry], "alone");
      const outcome = entry.outcome ?? { error: new InvariantError("an enqueue ended without an outcome") };
      if ("error" in outcome) throw outcome.error;
      if ("answer" in outcome) return outcome.answer;
      const { accepted } = outcome;
      return { job: toJobView(accepted, accepted.payload ?? planned.payloadJson), duplicate: false };
    });
  }

  /** Up to 100 requests, each failing alone. `trace`: the caller's W3C context (§23). */
  async enqueueBatch(raws: readonly unknown[], trace?: string): Promise<BatchResultItem[]> {
    const unloaded = await loadKindsOf(this.deps.registry, raws);
    const checked = raws.map((raw): Checked => {
      try {
        const failed = unloaded.get((raw as { kind?: string } | null)?.kind ?? "");
        if (failed !== undefined) throw failed;
        const valid = validateEnqueue(raw, this.deps.registry, this.deps.queues);
        return trace === undefined ? { valid } : { valid, job: { trace } };
      } catch (err) {
        return { error: errorBody(err) };
      }
    });
    return this.enqueueMany(checked);
  }

  async enqueueChecked(entries: readonly CheckedEnqueue[]): Promise<BatchResultItem[]> {
    return this.enqueueMany(entries);
  }

  /**
   * A batch: its plain jobs in one submission, so every message shares SendMessageBatch requests of
   * up to 10, unique keys and large payloads included. Debounced and singleton jobs of one key go
   * one at a time, in the request's order (each may join the one before; a collect burst keeps the
   * order), each a submission of one; different keys side by side.
   */
  private async enqueueMany(entries: readonly Checked[]): Promise<BatchResultItem[]> {
    const now = this.deps.clock.now();
    const results: BatchResultItem[] = new Array(entries.length);
    const shared: { index: number; entry: Submission; span: Span }[] = [];
    const keyed: { index: number; checked: CheckedEnqueue }[] = [];
    entries.forEach((checked, index) => {
      if ("error" in checked) results[index] = { index, error: checked.error };
      else if (checked.valid.coalesceKey !== undefined) keyed.push({ index, checked });
      else shared.push({ index, ...this.planned(checked, now) });
    });
    const byKey = Map.groupBy(
      keyed,
      ({ checked }) => `${checked.valid.kind.name}#${checked.valid.coalesceKey}`,
    );
    const limit = pLimit(KEYS_AT_ONCE);
    const oneKey = (same: typeof keyed) =>
      limit(async () => {
        for (const { index, checked } of same) results[index] = await this.enqueueKeyed(index, checked);
      });
    await Promise.all([
      submit(
        this.deps,
        shared.map((s) => s.entry),
        "shared",
      ),
      ...[...byKey.values()].map(oneKey),
    ]);
    for (const { index, entry, span } of shared) {
      results[index] = resultOf(index, entry);
      endSpan(span, results[index]?.error?.message);
    }
    return results;
  }

  /** A debounced or singleton job of a batch: a submission of one, planned at its turn (a burst's run counts from it). */
  private async enqueueKeyed(index: number, checked: CheckedEnqueue): Promise<BatchResultItem> {
    let span: Span | undefined;
    let result: BatchResultItem;
    try {
      const target = this.deps.coalesce.targetOf(checked.valid, checked.job);
      const one = this.planned(checked, this.deps.clock.now(), target);
      span = one.span;
      await submit(this.deps, [one.entry], "alone");
      result = resultOf(index, one.entry);
    } catch (err) {
      result = { index, error: errorBody(err) };
    }
    if (span) endSpan(span, result.error?.message);
    return result;
  }

  /** A checked request planned under its own producer span (`skyforge.enqueue <kind>`). */
  private planned({ valid, job }: CheckedEnqueue, now: number, target?: CoalesceTarget) {
    const span = enqueueSpan(valid.kind.name, valid.queue.name, job?.trace);
    const planned = plan(valid, now, this.deps.store.layout.indexShards, withTraceOf(job, span));
    span.setAttribute("skyforge.job.id", planned.item.id);
    const entry: Submission = { planned, queue: valid.queue, ...(target ? { target } : {}) };
    return { entry, span };
  }
}

/** A batch entry's answer from its outcome. */
function resultOf(index: number, { outcome }: Submission): BatchResultItem {
  if (!outcome) return { index, error: errorBody(undefined) };
  if ("error" in outcome) return { index, error: outcome.body ?? errorBody(outcome.error) };
  if ("accepted" in outcome) return { index, id: outcome.accepted.id, duplicate: false };
  const { answer } = outcome;
  return { index, id: answer.job.id, duplicate: true, ...(answer.debounced ? { debounced: true } : {}) };
}
