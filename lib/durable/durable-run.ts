import { needsClaimCheck } from "../claims/claim-keys.ts";
import {
  type DurableBody,
  durableKeepUntil,
  loadDurable,
  stepPart,
  stowDurable,
} from "../claims/durable-bodies.ts";
import { EventTimeoutError, TokenTimeoutError } from "../durable-errors.ts";
import { DurableMisuseError, UsageError } from "../errors.ts";
import {
  type DurableContext,
  type EventWait,
  MAX_SLEEP_SECONDS,
  type StepOptions,
  type StepType,
  sleepProblem,
  stepResultJson,
  timeoutProblem,
  type WaitToken,
} from "../job/durable.ts";
import { raceBranches } from "../job/race.ts";
import { MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import { jobAttributes, withSpan } from "../observability/tracing.ts";
import { Suspension } from "../services/suspension.ts";
import { deleteEventWaiter } from "../store/event-waiter-ops.ts";
import type { JobItem } from "../store/job-item.ts";
import { INLINE_STEPS_BYTES, inlineStepBytes, type StepRecord } from "../store/step-record.ts";
import { getToken } from "../store/token-ops.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { putWaitToken } from "./durable-tokens.ts";
import { waitSince } from "./event-lookback.ts";
import { checkEventWait } from "./event-wait-checks.ts";
import type { Journal } from "./journal.ts";
import { type OpenJournal, openJournal } from "./open-journal.ts";
import { parallelSteps } from "./parallel.ts";
import { waitForAny } from "./race.ts";
import { recordStepFitting } from "./record-step-fitting.ts";
import { readRecorded, storedBodiesOf } from "./recorded-bodies.ts";
import { callWithRetries, stepOptionsProblem, timerWait } from "./step-retries.ts";
import { StepsInFlight } from "./steps-in-flight.ts";

/**
 * One run's durable context (docs/architecture.md §22). The handler runs from the top: a name
 * recorded by an earlier run returns its record; a new one runs and is recorded under this run's
 * fence, so a run that lost its lease records nothing. A sleep or a wait that must wait resolves
 * `suspended` (the run supervisor ends the run with it) and never returns to the handler.
 */
export class DurableRun {
  readonly suspended: Promise<Suspension>;
  private suspend!: (s: Suspension) => void;
  /** A divergence from the journal ends the run with it, whatever the handler does with the error. */
  private diverge!: (e: Error) => void;
  private readonly steps: Record<string, StepRecord>;
  mapExists: boolean;
  private readonly journal: Journal;
  /** Its journal as opened under its kind's version: `ready` once it may be written. */
  private readonly opened: OpenJournal;
  /** Steps in flight: a suspend waits for them, and they share the inline budget. */
  private readonly inFlight = new StepsInFlight();
  readonly deps: DurableDeps;
  readonly item: JobItem;
  readonly fence: string;
  /** Whether the run still surely holds its job (JobWatch.live). */
  private readonly live: () => boolean;
  /** Its queue's, in force: how long its bodies in the claims bucket are kept (durableKeepUntil). */
  private readonly retentionDays: { done: number; dead: number };

  constructor(
    deps: DurableDeps,
    item: JobItem,
    fence: string,
    live: () => boolean,
    retentionDays: { done: number; dead: number },
  ) {
    this.deps = deps;
    this.item = item;
    this.fence = fence;
    this.live = live;
    this.retentionDays = retentionDays;
    this.suspended = new Promise((resolve, reject) => {
      this.suspend = resolve;
      this.diverge = reject;
    });
    this.suspended.catch(() => {}); // The run's race settles on it; a run that has none leaves it.
    this.opened = openJournal(deps, item, fence, (e) => this.diverge(e));
    ({ steps: this.steps, journal: this.journal, mapExists: this.mapExists } = this.opened);
  }

  get context(): Omit<DurableContext, "invoke" | "invokeMany"> {
    return {
      step: (name, fn, options) => this.step(name, fn, options),
      sleep: (name, seconds) => this.sleepFor(name, seconds),
      sleepUntil: (name, until) => this.sleepUntil(name, until),
      createToken: (name, options) => this.createToken(name, options.timeoutSeconds),
      waitForToken: (token, options) => this.waitForToken(token, options?.schema),
      waitForEvent: (name, wait) => this.waitForEvent(name, wait),
      version: (name, range) => this.inFlight.track(this.versionAt(name, range)),
      ...raceBranches,
      waitForAny: (name, branches) => waitForAny(this, name, branches),
      ...parallelSteps({
        step: (name, fn) => this.step(name, fn),
        suspending: () => this.inFlight.suspending,
        mapExists: () => this.mapExists,
      }),
    };
  }

  /** The name taken at its place as a call of `type` (Journal.take), for the features in files of their own. */
  take(name: string, type: StepType): { recorded: StepRecord | undefined; at: number } {
    return this.journal.take(name, type);
  }

  /** Before work a new owner may also do: a run that may have lost its job does none of it. */
  stillOurs(): void {
    this.journal.check();
    if (!this.live()) throw new UsageError("this run may have lost its lease: it records nothing more");
  }

  record(at: number, op: StepType, fields: Omit<StepRecord, "n" | "op" | "a" | "t">): StepRecord {
    return { n: at, op, a: this.item.attempts, t: this.deps.clock.now(), ...fields };
  }

  async write(name: string, record: StepRecord): Promise<StepRecord> {
    const { ready, version } = this.opened;
    await ready;
    this.stillOurs();
    const job = [this.deps.store, this.item.id, this.fence] as const;
    const out = await recordStepFitting(...job, name, record, this.mapExists, version);
    if (!out.recorded && out.reason === "lease_lost")
      throw new UsageError(`step "${name}" was not recorded: this run lost its lease`);
    this.mapExists = true;
    if (out.recorded) this.deps.realtime?.stepRecorded(this.item, name);
    const kept = out.recorded ? record : out.record;
    this.steps[name] = kept;
    return kept;
  }

  private async bodyOf(name: string, json: string, suffix: string | number): Promise<DurableBody> {
    const now = this.deps.clock.now();
    const bytes = Buffer.byteLength(json);
    const full = inlineStepBytes(this.steps) + this.inFlight.inlineHeld + bytes > INLINE_STEPS_BYTES;
    // Held before any await, so a step beside this one sees it; its step lets go once written.
    if (!full && !needsClaimCheck(json)) this.inFlight.inlineHeld += bytes;
    const job = { id: this.item.id, part: stepPart(name, suffix) };
    // Written while the job runs: no wait ahead is known yet. A suspend moves it if its wait needs more.
    const keepUntil = durableKeepUntil(now, now, this.retentionDays);
    return stowDurable(this.deps.claims, job, json, now, keepUntil, full);
  }

  read(name: string, record: StepRecord): Promise<unknown> {
    return readRecorded(this.deps.claims, this.item.id, name, record);
  }

  /** ctx.version: recorded once per job, the first time a run of it asks (lib/durable/versions.ts). */
  private async versionAt(name: string, range: readonly [number, number]): Promise<number> {
    const { value, fresh, at } = this.journal.takeVersion(name, range);
    if (fresh) await this.write(name, this.record(at, "version", { v: JSON.stringify(value) }));
    return value;
  }

  /** A step, kept among those in flight until it settles. */
  private step<T>(name: string, fn: () => Promise<T> | T, options?: StepOptions): Promise<T> {
    return this.inFlight.track(this.stepOnce(name, fn, options));
  }

  private async stepOnce<T>(name: string, fn: () => Promise<T> | T, options?: StepOptions): Promise<T> {
    const { recorded, at } = this.journal.take(name, "step");
    const badOptions = stepOptionsProblem(name, options);
    if (badOptions) throw new DurableMisuseError(badOptions);
    if (recorded) return (await this.read(name, recorded)) as T;
    // Its function would run now and again after the wake, its record lost with the ending run.
    if (this.inFlight.ended) return new Promise<never>(() => {});
    this.stillOurs();
    const attributes = { ...jobAttributes(this.item), "skyforge.step": name };
    const call = () => callWithRetries(fn, options, timerWait);
    const value = await withSpan(`skyforge.step ${name}`, attributes, call, this.item.trace);
    if (value === undefined) {
      await this.write(name, this.record(at, "step", {}));
      return value;
    }
    const json = stepResultJson(name, value);
    if (Buffer.byteLength(json) > MAX_PAYLOAD_BYTES)
      throw new DurableMisuseError(`step "${name}" returned over ${MAX_PAYLOAD_BYTES} bytes of JSON`);
    const record = this.record(at, "step", await this.bodyOf(name, json, this.item.attempts));
    const kept = await this.write(name, record).finally(() => {
      if (record.v !== undefined) this.inFlight.inlineHeld -= Buffer.byteLength(record.v);
    });
    // Both paths hand back the JSON's value, so a first run and a replay see the same types; the
    // JSON just written is parsed again rather than read back from the claims bucket.
    return (kept === record ? JSON.parse(json) : await this.read(name, kept)) as T;
  }

  private sleepFor(name: string, seconds: number): Promise<void> {
    const problem = sleepProblem(name, seconds);
    if (problem) return Promise.reject(new DurableMisuseError(problem));
    return this.sleepTo(name, (now) => now + seconds * 1000);
  }

  private sleepUntil(name: string, until: Date): Promise<void> {
    const at = until instanceof Date ? until.getTime() : Number.NaN;
    const now = this.deps.clock.now();
    if (Number.isNaN(at) || at - now > MAX_SLEEP_SECONDS * 1000)
      return Promise.reject(new DurableMisuseError(`sleepUntil "${name}": not a date within 365 days`));
    return this.sleepTo(name, () => at);
  }

  private async sleepTo(name: string, untilOf: (now: number) => number): Promise<void> {
    const { recorded, at } = this.journal.take(name, "sleep");
    const now = this.deps.clock.now();
    if (recorded) {
      if ((recorded.until ?? 0) <= now) return;
      return this.wait(new Suspension({ for: "sleep", until: recorded.until ?? now }));
    }
    // The same now: read again, the clock may have moved a ms, and a sleep of 0 would suspend for it.
    const until = Math.round(untilOf(now));
    const record = this.record(at, "sleep", { until });
    if (until <= now) return this.write(name, record).then(() => undefined);
    this.stillOurs();
    return this.wait(new Suspension({ for: "sleep", until }, { name, record, mapExists: this.mapExists }));
  }

  private async createToken(name: string, timeoutSeconds: number): Promise<WaitToken> {
    const { recorded, at } = this.journal.take(name, "token");
    if (recorded) return (await this.read(name, recorded)) as WaitToken;
    const problem = timeoutProblem(`token "${name}"`, timeoutSeconds);
    if (problem) throw new DurableMisuseError(problem);
    this.stillOurs();
    const token = await putWaitToken(this.deps, this.item, name, timeoutSeconds);
    const kept = await this.write(
      name,
      this.record(at, "token", { token: token.id, v: JSON.stringify(token) }),
    );
    return (await this.read(name, kept)) as WaitToken;
  }

  private async waitForToken<T>(token: WaitToken, schema?: { parse(v: unknown): T }): Promise<T> {
    this.stillOurs();
    const current = await getToken(this.deps.store, token.id);
    if (!current || current.jobId !== this.item.id)
      throw new DurableMisuseError(`waitForToken: token ${token.id} is not one of this job's tokens`);
    if (current.status === "completed") {
      const json = await loadDurable(this.deps.claims, this.item.id, current);
      const data: unknown = json === undefined ? undefined : JSON.parse(json);
      return schema ? schema.parse(data) : (data as T);
    }
    if (current.timeoutAt <= this.deps.clock.now())
      throw new TokenTimeoutError(current.step, `token "${current.step}" (${token.id}) timed out`);
    return this.wait(new Suspension({ for: "token", token: token.id, until: current.timeoutAt }));
  }

  private async waitForEvent<T>(name: string, wait: EventWait<T>): Promise<T> {
    const { recorded, at } = this.journal.take(name, "event");
    const { event, match, timeoutSeconds } = wait;
    checkEventWait(name, wait);
    const now = this.deps.clock.now();
    if (recorded && (recorded.v !== undefined || recorded.o !== undefined)) {
      const data = await this.read(name, recorded);
      return wait.schema ? wait.schema.parse(data) : (data as T);
    }
    const since = waitSince(this.deps.app, event, recorded?.t ?? now, wait.since);
    const waiter = { event, match, step: name, since };
    if (recorded) {
      const until = recorded.until ?? now;
      if (until <= now) {
        // The wait is over: its pointer goes, so no later event reads it (docs/architecture.md §22).
        const pair = { event: recorded.event ?? event, match: recorded.match ?? match };
        await deleteEventWaiter(this.deps.store, pair.event, pair.match, this.item.id, { step: name });
        throw new EventTimeoutError(name, `no "${event}" event for "${match}" came in time`);
      }
      return this.wait(new Suspension({ for: "event", event, match, until }, undefined, waiter));
    }
    this.stillOurs();
    const until = now + Math.round(timeoutSeconds * 1000);
    const record = this.record(at, "event", { event, match, until });
    return this.wait(
      new Suspension(
        { for: "event", event, match, until },
        { name, record, mapExists: this.mapExists },
        waiter,
      ),
    );
  }

  /**
   * Ends the run with `s` once the steps in flight have settled (one may have written the first steps
   * map): the handler's call never returns. The first wait wins; one beside it waits after the wake.
   */
  wait(s: Suspension): Promise<never> {
    const { ready, version } = this.opened;
    const end = () => {
      const step = s.step && { ...s.step, mapExists: this.mapExists, version };
      this.suspend(new Suspension(s.waiting, step, s.waiter, storedBodiesOf(this.steps), s.raceWaiters));
    };
    ready.then(() => this.inFlight.endAfterSteps(end), this.diverge);
    return new Promise<never>(() => {});
  }
}
