import { loadDurable } from "../claims/durable-bodies.ts";
import { ClientError, InvariantError } from "../errors.ts";
import type { EventDelivery, JobSteps, TokenCompleted, TokenView } from "../job/durable.ts";
import type {
  DurableRunHandle,
  DurableService,
  RetentionDays,
  SuspendWrite,
} from "../services/durable-service.ts";
import type { Suspension } from "../services/suspension.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { toStepViews, toWaitingView } from "../store/step-record.ts";
import { childEnded } from "./child-end.ts";
import { deliverEvent } from "./deliver-event.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { afterSuspend, beforeSuspend } from "./durable-suspend.ts";
import { completeWaitToken, tokenView } from "./durable-tokens.ts";
import type { DurableRunOpener } from "./open-run.ts";

/** Durable steps, sleeps and waits (docs/architecture.md §22): the engine's one door to them. */
export class Durable implements DurableService {
  private readonly deps: DurableDeps;
  /** The run itself (lib/durable/open-run.ts): given only where jobs run, so other bundles leave it out. */
  private readonly opener: DurableRunOpener | undefined;

  constructor(deps: DurableDeps, opener?: DurableRunOpener) {
    this.deps = deps;
    this.opener = opener;
  }

  openRun(item: JobItem, fence: string, live: () => boolean, retentionDays: RetentionDays): DurableRunHandle {
    if (!this.opener)
      throw new InvariantError(
        `durable job ${item.id} reached a function that runs no jobs: its engine has no durableRuns`,
      );
    return this.opener(this.deps, item, fence, live, retentionDays);
  }

  beforeSuspend(item: JobItem, s: Suspension, fence: string, retentionDays: RetentionDays) {
    return beforeSuspend(this.deps, item, s, fence, retentionDays);
  }

  afterSuspend(s: Suspension, write: SuspendWrite, now: number): Promise<void> {
    return afterSuspend(this.deps, s, write, now);
  }

  async stepsOf(jobId: string): Promise<JobSteps> {
    const job = await getJob(this.deps.store, jobId);
    if (!job) throw new ClientError("not_found", `job ${jobId} not found`);
    const objects = Object.entries(job.steps ?? {}).filter(([, r]) => r.o !== undefined);
    const loaded = await Promise.all(
      objects.map(async ([name, r]) => [name, await loadDurable(this.deps.claims, job.id, r)] as const),
    );
    return {
      jobId: job.id,
      status: job.status,
      ...(job.waiting && job.status === "scheduled" ? { waiting: toWaitingView(job.waiting) } : {}),
      steps: toStepViews(job.steps, this.deps.clock.now(), new Map(loaded)),
    };
  }

  tokenView(id: string): Promise<TokenView> {
    return tokenView(this.deps, id);
  }

  completeToken(id: string, secret: string | undefined, data: unknown): Promise<TokenCompleted> {
    return completeWaitToken(this.deps, id, secret, data);
  }

  deliverEvent(raw: unknown): Promise<EventDelivery> {
    return deliverEvent(this.deps, raw);
  }

  async childEnded(job: JobItem): Promise<void> {
    await childEnded(this.deps, job);
  }
}
