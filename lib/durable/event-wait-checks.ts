import { DurableMisuseError, UnrecoverableError } from "../errors.ts";
import { type EventWait, eventKeyProblem, timeoutProblem } from "../job/durable.ts";

/**
 * The checks of a `waitForEvent` call (docs/guide/durable-jobs.md), before anything is recorded: a
 * call made wrongly is a DurableMisuseError naming the wait (the same on every attempt, so its job
 * ends dead at once); a match the table can't hold as a key, an UnrecoverableError saying why.
 */
export function checkEventWait(name: string, wait: EventWait<unknown>): void {
  const { event, match, timeoutSeconds, since } = wait;
  if (typeof event !== "string" || event.length === 0 || typeof match !== "string")
    throw new DurableMisuseError(
      `waitForEvent "${name}": event must be a non-empty string and match a string`,
    );
  const problem = timeoutProblem(`waitForEvent "${name}"`, timeoutSeconds);
  if (problem) throw new DurableMisuseError(problem);
  if (since !== undefined && since !== "lookback" && since !== "wait")
    throw new DurableMisuseError(`waitForEvent "${name}": since must be "lookback" or "wait"`);
  // The match often comes from the job's data (an order's id): one the table can't hold as a key
  // would fail this run's suspend on every delivery, so the job ends dead now, saying why.
  const keyProblem = eventKeyProblem(event, match);
  if (keyProblem) {
    const subject = keyProblem.at === "both" ? "the key of its event and match" : `its ${keyProblem.at}`;
    throw new UnrecoverableError(`waitForEvent "${name}": ${subject} ${keyProblem.problem}`);
  }
}
