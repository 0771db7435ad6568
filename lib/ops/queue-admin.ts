import {
  type QueueDeclaration,
  tierOf,
  visibilityTimeoutSeconds,
} from "../declarations/queue-declaration.ts";
import { ClientError, issuesOf } from "../errors.ts";
import { type EventSourceState, needsRepair } from "../queue-control/event-source-control.ts";
import {
  effectiveSettings,
  patchAttributes,
  QueuePatch,
  type QueueSettings,
} from "../queue-control/settings.ts";
import type { Engine } from "../services/engine-services.ts";
import { countIndexed } from "../store/index-count.ts";
import type { QueueState } from "../store/queue-state.ts";
import { getQueueState, setQueueConfig } from "../store/queue-state.ts";
import type { QueueDepth } from "../transport/sqs-transport.ts";

export type QueueAdminDeps = Pick<
  Engine,
  "store" | "transport" | "queues" | "clock" | "log" | "eventSources"
>;

/** `GET /queues` item: the declaration, what is in force now, and live counts. */
export interface QueueView extends QueueSettings {
  name: string;
  cooldownUntil?: string;
  declared: Pick<
    QueueDeclaration,
    | "batchSize"
    | "batchWindowSeconds"
    | "recordConcurrency"
    | "workerTimeoutSeconds"
    | "leaseSeconds"
    | "maxReceiveCount"
    | "maxConcurrency"
    | "backoff"
    | "retentionDays"
  > & { visibilityTimeoutSeconds: number };
  /** SQS's depth, and the queue's paused jobs (onExhausted "pause": docs/architecture.md §21). */
  counts: QueueDepth & { paused: number };
  /**
   * The visibility timeout SQS has for the queue now: below `declared.visibilityTimeoutSeconds`
   * (what a deploy sets), a run can outlive it before its worker's first hold (`skyforge doctor`).
   */
  visibilityTimeoutSeconds: number;
  eventSource?: EventSourceState;
}

/**
 * Queue controls (docs/architecture.md §6): the config item records the intent first, then the event source is
 * made to match. If that second step fails, the reaper's repair pass finishes it.
 */
export class QueueAdmin {
  private readonly deps: QueueAdminDeps;

  constructor(deps: QueueAdminDeps) {
    this.deps = deps;
  }

  async list(): Promise<QueueView[]> {
    return Promise.all(this.deps.queues.map((q) => this.view(q)));
  }

  pause(name: string): Promise<QueueView> {
    return this.change(name, { paused: true });
  }

  resume(name: string): Promise<QueueView> {
    return this.change(name, { paused: false });
  }

  async patch(name: string, body: unknown): Promise<QueueView> {
    const declared = this.declared(name);
    const parsed = QueuePatch.safeParse(body);
    if (!parsed.success)
      throw new ClientError("validation_error", "invalid queue settings", issuesOf(parsed.error));
    if (parsed.data.maxConcurrency !== undefined && tierOf(declared) === "pool") {
      throw new ClientError(
        "validation_error",
        `queue ${name} is served by the pool: its concurrency is its kinds' soft/hard children, not maxConcurrency`,
        [{ path: "maxConcurrency", message: "not available on a pool-tier queue" }],
      );
    }
    const current = effectiveSettings(declared, await getQueueState(this.deps.store, name));
    const base = parsed.data.backoff?.baseSeconds ?? current.backoff.baseSeconds;
    const max = parsed.data.backoff?.maxSeconds ?? current.backoff.maxSeconds;
    if (base > max) {
      throw new ClientError(
        "validation_error",
        `backoff.baseSeconds (${base}) must not exceed backoff.maxSeconds (${max})`,
      );
    }
    return this.change(name, patchAttributes(parsed.data));
  }

  /**
   * Makes every event source match its queue's recorded intent; the reaper runs it each tick.
   * result: how many were changed.
   */
  async repairEventSources(): Promise<number> {
    const control = this.deps.eventSources;
    if (!control) return 0;
    let repaired = 0;
    for (const q of this.deps.queues) {
      const settings = effectiveSettings(q, await getQueueState(this.deps.store, q.name));
      const intent = { enabled: !settings.paused, maxConcurrency: settings.maxConcurrency };
      const actual = await control.describe(q.name);
      if (!actual || !needsRepair(intent, actual)) continue;
      this.deps.log.warn("event source differs from the queue's recorded intent; repairing", {
        queue: q.name,
        intent,
        actual,
      });
      await control.apply(q.name, intent);
      repaired += 1;
    }
    return repaired;
  }

  private declared(name: string): QueueDeclaration {
    const q = this.deps.queues.find((d) => d.name === name);
    if (!q) throw new ClientError("not_found", `queue ${name} is not declared`);
    return q;
  }

  private async change(
    name: string,
    attrs: Omit<QueueState, "cooldownUntil" | "updatedAt">,
  ): Promise<QueueView> {
    const q = this.declared(name);
    const state = await setQueueConfig(this.deps.store, name, attrs);
    const settings = effectiveSettings(q, state);
    await this.deps.eventSources?.apply(name, {
      enabled: !settings.paused,
      maxConcurrency: settings.maxConcurrency,
    });
    this.deps.log.info("queue settings changed", { queue: name, ...attrs });
    return this.view(q, state);
  }

  private async view(q: QueueDeclaration, known?: QueueState): Promise<QueueView> {
    const [state, sqs, eventSource, paused] = await Promise.all([
      known ?? getQueueState(this.deps.store, q.name),
      this.deps.transport.inspect(q.name),
      this.deps.eventSources?.describe(q.name),
      countIndexed(this.deps.store, q.name, "paused"),
    ]);
    const now = this.deps.clock.now();
    return {
      name: q.name,
      ...effectiveSettings(q, state),
      ...(state.cooldownUntil && state.cooldownUntil > now
        ? { cooldownUntil: new Date(state.cooldownUntil).toISOString() }
        : {}),
      declared: {
        batchSize: q.batchSize,
        batchWindowSeconds: q.batchWindowSeconds,
        recordConcurrency: q.recordConcurrency,
        workerTimeoutSeconds: q.workerTimeoutSeconds,
        leaseSeconds: q.leaseSeconds,
        maxReceiveCount: q.maxReceiveCount,
        maxConcurrency: q.maxConcurrency,
        backoff: q.backoff,
        retentionDays: q.retentionDays,
        visibilityTimeoutSeconds: visibilityTimeoutSeconds(q),
      },
      counts: { ...sqs.depth, paused: paused.count },
      visibilityTimeoutSeconds: sqs.visibilityTimeoutSeconds,
      ...(eventSource ? { eventSource } : {}),
    };
  }
}
