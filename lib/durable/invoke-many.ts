import { DurableMisuseError, InvariantError } from "../errors.ts";
import type { InvokeManyOptions } from "../job/durable.ts";
import { kindsReadyFor, validateEnqueue } from "../producer/validate.ts";
import { refusalIsFinal } from "../runtime/handler-context.ts";
import type { StepRecord } from "../store/step-record.ts";
import { type ChildOutcome, childValue } from "./child-end.ts";
import { type ChildRun, childOutcome, enqueueChild, waitForChild } from "./child-jobs.ts";

/** `ctx.invokeMany`'s children in flight at once: 1..MAX_INVOKE_CONCURRENCY, DEFAULT_INVOKE_CONCURRENCY unless given. */
export const MAX_INVOKE_CONCURRENCY = 100;
export const DEFAULT_INVOKE_CONCURRENCY = 10;

/** The step of the `index`th child of an invokeMany named `name`. */
export const childStepName = (name: string, index: number) => `${name}[${index}]`;

/** Why `concurrency` can't be, naming the call; undefined when it can. */
export function concurrencyProblem(name: string, concurrency: unknown): string | undefined {
  if (Number.isInteger(concurrency) && (concurrency as number) >= 1) {
    if ((concurrency as number) <= MAX_INVOKE_CONCURRENCY) return undefined;
  }
  return `invokeMany "${name}": concurrency ${String(concurrency)} is outside 1..${MAX_INVOKE_CONCURRENCY}`;
}

/**
 * Every payload not yet enqueued, checked against the child kind before any is: one the kind refuses
 * fails the call (naming its index) with nothing of it enqueued, as ctx.invoke's bad input does.
 */
async function checkPayloads(
  run: ChildRun,
  name: string,
  kind: string,
  payloads: readonly unknown[],
  fresh: number[],
): Promise<void> {
  await kindsReadyFor(run.deps.registry, [{ kind }]);
  for (const i of fresh)
    await refusalIsFinal(`invokeMany "${name}": child ${i} of kind "${kind}"`, async () =>
      validateEnqueue({ kind, payload: payloads[i] }, run.deps.registry, run.deps.queues),
    );
}

/**
 * `ctx.invokeMany` (docs/guide/durable-jobs.md, "Child jobs"): a child step per payload (`name[i]`),
 * each enqueued once per job as ctx.invoke's, at most `concurrency` not yet ended at once. A run
 * enqueues children up to that window, in order, records each at once (its step names the child),
 * then waits for the first that has not ended; the child's end resumes it, and the ends of the others
 * meanwhile are recorded in their steps (recordChildOutcome). Once all ended: their results in the
 * payloads' order, or the first failed child's ChildJobError.
 */
export async function invokeMany(
  run: ChildRun,
  kind: string,
  payloads: readonly unknown[],
  options: InvokeManyOptions = {},
): Promise<unknown[]> {
  const name = options.name ?? kind;
  const concurrency = options.concurrency ?? DEFAULT_INVOKE_CONCURRENCY;
  const problem = concurrencyProblem(name, concurrency);
  if (problem) throw new DurableMisuseError(problem);
  if (!Array.isArray(payloads))
    throw new DurableMisuseError(`invokeMany "${name}": payloads must be an array`);
  const steps = payloads.map((_, i) => childStepName(name, i));
  // Each child's place in the handler's order, as its name was taken.
  const taken = steps.map((step) => run.take(step, "child"));
  const records: (StepRecord | undefined)[] = taken.map((t) => t.recorded);
  const other = records.findIndex((r) => r !== undefined && r.child === undefined);
  if (other !== -1)
    throw new DurableMisuseError(
      `invokeMany "${name}": "${steps[other]}" is recorded for another step, not a child`,
    );
  const outcomes: (ChildOutcome | undefined)[] = await Promise.all(
    records.map((r, i) => (r ? childOutcome(run, steps[i] as string, r) : undefined)),
  );
  const unrecorded = records.flatMap((r, i) => (r === undefined ? [i] : []));
  await checkPayloads(run, name, kind, payloads, unrecorded);
  const open = records.filter((r, i) => r !== undefined && outcomes[i] === undefined).length;
  const fresh = unrecorded.slice(0, Math.max(0, concurrency - open));
  await Promise.all(
    fresh.map(async (i) => {
      const step = steps[i] as string;
      const child = await enqueueChild(run, step, kind, payloads[i]);
      records[i] = await run.write(step, run.record(taken[i]?.at ?? 0, "child", { child }));
    }),
  );
  // The first child not yet ended is waited for; with none open, this run has enqueued the next.
  const next = outcomes.indexOf(undefined);
  const waitFor = next === -1 ? undefined : records[next];
  if (waitFor) return waitForChild(run, steps[next] as string, waitFor, false);
  if (next !== -1)
    throw new InvariantError(`invokeMany "${name}": child ${next} has neither a record nor an end`);
  return outcomes.map((o, i) => childValue(steps[i] as string, records[i]?.child ?? "", o as ChildOutcome));
}
