import type * as z from "zod";
import { ClientError, issuesOf } from "../errors.ts";
import {
  type GroupEvent,
  groupTopic,
  jobTopic,
  type PublishedEvent,
  queueTopic,
  type ReplayRequest,
  type StatusEvent,
  type StreamWriter,
} from "../job/realtime-wire.ts";
import type { RealtimeService, Subscription } from "../services/realtime-service.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { toWaitingView } from "../store/step-record.ts";
import { listStreamChunks } from "../store/stream-chunk-ops.ts";
import type { RealtimeDeps } from "./realtime-deps.ts";
import { streamWriter } from "./stream-writer.ts";
import { QueueSubscriptionRequest, SubscriptionRequest } from "./subscription-request.ts";
import { mintToken } from "./token.ts";

/** A done result published inline up to this size; a larger one is read with a GET of the job. */
const INLINE_RESULT_BYTES = 16 * 1024;
/** Chunks per Query of a replay. */
const REPLAY_PAGE = 100;

/** Realtime (docs/architecture.md §25): the engine's one door to it. */
export class Realtime implements RealtimeService {
  private readonly deps: RealtimeDeps;

  constructor(deps: RealtimeDeps) {
    this.deps = deps;
  }

  queued(job: JobItem) {
    this.deps.positions.delete(job.id);
    this.publishStatus(job, () => this.statusOf(job));
  }
  running(job: JobItem) {
    this.publishStatus(job, () => this.statusOf(job));
  }
  stepRecorded(job: JobItem, step: string) {
    this.publish(job, () => ({ type: "step", jobId: job.id, step, at: this.deps.clock.now() }));
  }
  waiting(job: JobItem) {
    this.deps.positions.delete(job.id);
    if (!this.deps.publishing) return;
    // The sleep or wait the run suspended on is recorded by the suspend itself: its latest step.
    const latest = Object.entries(job.steps ?? {}).reduce<[string, { n: number; t: number }] | undefined>(
      (best, entry) => (!best || entry[1].n > best[1].n ? entry : best),
      undefined,
    );
    if (latest) this.publish(job, () => ({ type: "step", jobId: job.id, step: latest[0], at: latest[1].t }));
    this.publishStatus(job, () => this.statusOf(job));
  }
  paused(job: JobItem) {
    this.deps.positions.delete(job.id);
    this.publishStatus(job, () => this.statusOf(job));
  }
  ended(job: JobItem) {
    const streams = this.deps.positions.get(job.id);
    this.deps.positions.delete(job.id);
    if (!this.deps.publishing) return;
    // Its run wrote here (not a cancel's or the DLQ drain's end): its streams' ends are known.
    const event = { ...this.statusOf(job), ...(streams ? { streams } : {}) };
    this.publishStatus(job, () => event);
    // A group's subscribers hear of each child's end on the group's topic.
    if (job.member)
      this.deps.queue.send(groupTopic(this.deps.prefix, job.member.g), JSON.stringify(event), job);
  }

  groupProgress(
    groupId: string,
    child: { id: string; queue: string; kind: string },
    progress: Pick<GroupEvent, "slice" | "counts">,
  ) {
    if (!this.deps.publishing) return;
    const event: GroupEvent = {
      type: "group",
      groupId,
      jobId: child.id,
      ...progress,
      at: this.deps.clock.now(),
    };
    this.deps.queue.send(groupTopic(this.deps.prefix, groupId), JSON.stringify(event), child);
  }

  stream(job: JobItem, name: string): StreamWriter {
    return streamWriter(this.deps, job, name);
  }

  async subscribe(jobId: string, raw: unknown): Promise<Subscription> {
    const request = parseRequest(SubscriptionRequest, raw);
    const { secret, url } = this.configured();
    const job = await getJob(this.deps.store, jobId);
    if (!job) throw new ClientError("not_found", `job ${jobId} not found`);
    if (request.group && !job.member)
      throw new ClientError("validation_error", `job ${jobId} is in no group`);
    const group = request.group && job.member ? { g: job.member.g } : {};
    return this.mint({ j: job.id, ...group }, request.expiresInSeconds, secret, url);
  }

  async subscribeQueue(name: string, raw: unknown): Promise<Subscription> {
    const request = parseRequest(QueueSubscriptionRequest, raw);
    const { secret, url } = this.configured();
    if (!this.deps.queues.some((q) => q.name === name))
      throw new ClientError("not_found", `queue ${name} is not declared`);
    return this.mint({ q: name }, request.expiresInSeconds, secret, url);
  }

  /** The stack's secret and subscribers' url, or the 404 of a stack without realtime. */
  private configured() {
    const { secret } = this.deps;
    const url = this.deps.url();
    if (!secret || !url) throw new ClientError("not_found", "realtime is not configured on this stack");
    return { secret, url };
  }

  private async mint(
    grant: { j: string; g?: string } | { q: string },
    expiresInSeconds: number,
    secret: NonNullable<RealtimeDeps["secret"]>,
    url: string,
  ): Promise<Subscription> {
    const exp = this.deps.clock.now() + expiresInSeconds * 1000;
    const key = typeof secret === "string" ? secret : await secret();
    const token = mintToken({ p: this.deps.prefix, ...grant, exp }, key);
    return { url, token, expiresAt: new Date(exp).toISOString() };
  }

  async replay(
    jobId: string,
    request: ReplayRequest,
    answer: (event: PublishedEvent | { type: "replayed"; id: string }) => Promise<void>,
  ): Promise<void> {
    // The status first, then the chunks: a terminal status read here comes after all the run's
    // chunks were kept (each write is kept before the run goes on), so the query below has them all.
    const job = await getJob(this.deps.store, jobId);
    if (job) await answer(this.statusOf(job));
    // The steps recorded so far, in their order: a step's live message is sent once, and may be gone.
    const steps = Object.entries(job?.steps ?? {}).sort(([, a], [, b]) => a.n - b.n);
    for (const [step, record] of steps) await answer({ type: "step", jobId, step, at: record.t });
    let after: string | undefined;
    do {
      const page = await listStreamChunks(this.deps.store, jobId, request.from, REPLAY_PAGE, after);
      for (const c of page.chunks) {
        if (c.seq <= (request.streams?.[c.stream] ?? request.from)) continue;
        await answer({
          type: "stream",
          jobId,
          stream: c.stream,
          seq: c.seq,
          at: c.at,
          ...(c.chunk !== undefined ? { chunk: JSON.parse(c.chunk) as unknown } : {}),
          ...(c.closed ? { closed: true } : {}),
        });
      }
      after = page.next;
    } while (after);
    await answer({ type: "replayed", id: request.id });
  }

  drain(): Promise<void> {
    return this.deps.queue.drain();
  }

  /**
   * The event is built only when there is a publisher: a stack without realtime builds none (nor
   * parses a done job's result for it) at each of a job's transitions.
   */
  private publish(job: JobItem, event: () => PublishedEvent): void {
    if (!this.deps.publishing) return;
    this.deps.queue.send(jobTopic(this.deps.prefix, job.id), JSON.stringify(event()), job);
  }

  /** A status change goes to the job's topic and to its queue's, for the queue's tail. */
  private publishStatus(job: JobItem, event: () => StatusEvent): void {
    if (!this.deps.publishing) return;
    const payload = JSON.stringify(event());
    this.deps.queue.send(jobTopic(this.deps.prefix, job.id), payload, job);
    this.deps.queue.send(queueTopic(this.deps.prefix, job.queue), payload, job);
  }

  private statusOf(job: JobItem): StatusEvent {
    const inline =
      job.status === "done" &&
      !job.resultObject &&
      job.result !== undefined &&
      job.result.length <= INLINE_RESULT_BYTES;
    return {
      type: "status",
      jobId: job.id,
      status: job.status,
      at: this.deps.clock.now(),
      ...(job.waiting && job.status === "scheduled" ? { waiting: { ...toWaitingView(job.waiting) } } : {}),
      ...(inline ? { result: JSON.parse(job.result as string) as unknown } : {}),
      ...(job.lastError && job.status !== "done" ? { error: job.lastError } : {}),
    };
  }
}

/** A subscription request's body, or a 400 naming what is wrong with it. */
function parseRequest<T>(schema: { safeParse(raw: unknown): z.ZodSafeParseResult<T> }, raw: unknown): T {
  const parsed = schema.safeParse(raw ?? {});
  if (!parsed.success)
    throw new ClientError("validation_error", "invalid subscription request", issuesOf(parsed.error));
  return parsed.data;
}
