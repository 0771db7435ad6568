import { createHash } from "node:crypto";
import { DurableMisuseError, UnrecoverableError } from "../errors.ts";
import { coalesceRuleOf } from "../job/coalesce.ts";
import { type InvokeOptions, MAX_SLEEP_SECONDS, type StepType } from "../job/durable.ts";
import { isClaimed } from "../job/lanes.ts";
import { isTerminal } from "../job/status.ts";
import { refusalIsFinal } from "../runtime/handler-context.ts";
import { Suspension } from "../services/suspension.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import type { StepRecord } from "../store/step-record.ts";
import { type ChildOutcome, childOutcomeJson, childValue } from "./child-end.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { readRecorded } from "./recorded-bodies.ts";

/**
 * What a child call uses of its run (lib/durable/durable-run.ts): the journal's name check and
 * records, the lease check, and the suspend.
 */
export interface ChildRun {
  readonly deps: DurableDeps;
  readonly item: JobItem;
  take(name: string, type: StepType): { recorded: StepRecord | undefined; at: number };
  record(at: number, op: StepType, fields: Omit<StepRecord, "n" | "op" | "a" | "t">): StepRecord;
  write(name: string, record: StepRecord): Promise<StepRecord>;
  stillOurs(): void;
  wait(s: Suspension): Promise<never>;
}

/** How long a parent waits for a child before the reaper runs it again to look: the longest wait. */
const CHILD_WAIT_MS = MAX_SLEEP_SECONDS * 1000;

/**
 * The child's uniqueKey: one per (parent job, step), kept after the child ended ("retained"), so a
 * run retried after its enqueue (a crash before the step's record) gets the same child back. The
 * step's name is hashed: any name of 1..256 characters fits the key's 200.
 */
export function childKey(parentId: string, step: string): string {
  return `invoke:${parentId}:${createHash("sha256").update(step).digest("base64url").slice(0, 22)}`;
}

/**
 * Enqueues the child once per (parent, step): the producer checks the kind and the payload against
 * the child kind's schema before anything is written, and a refusal ends the parent's step with the
 * producer's error (nothing enqueued). A kind whose end can't be heard (a lane without a claim), or
 * that joins others' jobs (debounce, singleton), is refused the same way. result: the child's id.
 */
export async function enqueueChild(
  run: ChildRun,
  step: string,
  kind: string,
  payload: unknown,
): Promise<string> {
  const { deps, item } = run;
  const target = deps.registry.get(kind);
  if (target && coalesceRuleOf(target))
    throw new DurableMisuseError(
      `invoke "${step}": kind "${kind}" is debounced or a singleton: its jobs join others, so no child of its own could be awaited`,
    );
  if (target && !isClaimed(target.lane ?? "fenced"))
    throw new DurableMisuseError(
      `invoke "${step}": kind "${kind}" runs ${target.lane}, without a claim: its end can't resume a parent`,
    );
  run.stillOurs();
  // The child carries its parent's tags, as a follow-up does.
  const request = {
    kind,
    payload,
    uniqueKey: childKey(item.id, step),
    ...(item.tags?.length ? { tags: item.tags } : {}),
  };
  const extras = {
    parent: { j: item.id, q: item.queue, s: step },
    ...(item.trace ? { trace: item.trace } : {}),
  };
  // The producer's refusal for the request's content fails the step for good (an UnrecoverableError).
  const answer = await refusalIsFinal(`invoke "${step}": child of kind "${kind}"`, () =>
    deps.producer.enqueue(request, { uniqueKeyScope: "retained", job: extras }),
  );
  return answer.job.id;
}

/**
 * A child step's end as a replay finds it: recorded in the step (its end resumed this job), or read
 * from the child itself (it ended while this job waited for another child, or the resume's write was
 * lost). undefined: the child has not ended.
 */
export async function childOutcome(
  run: ChildRun,
  step: string,
  record: StepRecord,
): Promise<ChildOutcome | undefined> {
  if (record.v !== undefined || record.o !== undefined)
    return (await readRecorded(run.deps.claims, run.item.id, step, record)) as ChildOutcome;
  const child = record.child === undefined ? undefined : await getJob(run.deps.store, record.child);
  if (!child) {
    throw new UnrecoverableError(`child step "${step}": its job ${record.child ?? "(none)"} is gone`);
  }
  if (!isTerminal(child.status)) return undefined;
  return JSON.parse(await childOutcomeJson(run.deps, child)) as ChildOutcome;
}

/** Ends the run until the child `record` names ends (its step recorded already, or by this suspend). */
export function waitForChild(
  run: ChildRun,
  step: string,
  record: StepRecord,
  recordNow: boolean,
): Promise<never> {
  const child = record.child ?? "";
  const until = record.until ?? run.deps.clock.now() + CHILD_WAIT_MS;
  if (until <= run.deps.clock.now())
    throw new UnrecoverableError(
      `child step "${step}": job ${child} did not end within ${MAX_SLEEP_SECONDS / 86_400} days`,
    );
  const waiting = { for: "child" as const, child, until };
  return run.wait(new Suspension(waiting, recordNow ? { name: step, record, mapExists: false } : undefined));
}

/**
 * `ctx.invoke` (docs/guide/durable-jobs.md, "Child jobs"): the child enqueued once per run position,
 * the run suspended until the child ends (its "child" step written by the suspend), then the
 * child's result, or ChildJobError with its error.
 */
export async function invokeChild(
  run: ChildRun,
  kind: string,
  payload: unknown,
  options: InvokeOptions = {},
): Promise<unknown> {
  const step = options.name ?? kind;
  const { recorded, at } = run.take(step, "child");
  if (recorded) {
    if (recorded.child === undefined)
      throw new DurableMisuseError(`invoke "${step}": the name is recorded for another step, not a child`);
    const outcome = await childOutcome(run, step, recorded);
    if (outcome) return childValue(step, recorded.child, outcome);
    return waitForChild(run, step, recorded, false);
  }
  const child = await enqueueChild(run, step, kind, payload);
  run.stillOurs();
  const record = run.record(at, "child", { child, until: run.deps.clock.now() + CHILD_WAIT_MS });
  return waitForChild(run, step, record, true);
}
