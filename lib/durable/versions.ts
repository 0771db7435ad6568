import { VersionChangedError } from "../durable-errors.ts";
import { DurableMisuseError } from "../errors.ts";
import type { KindDefinition } from "../job/kind.ts";
import { kindVersionOf } from "../job/kind-version.ts";
import type { JobItem } from "../store/job-item.ts";
import type { StepRecord } from "../store/step-record.ts";

/**
 * Versions of a durable kind (docs/guide/durable-jobs.md, "Versions"): what a run opens its job's
 * journal under, and what `ctx.version` answers.
 */

/** How a run opens its job's journal: as recorded, dropped ("restart"), or not at all ("pause"). */
export type Opening =
  | { version: string; as: "recorded" }
  | { version: string; as: "restart" }
  | { version: string; as: "refused"; error: VersionChangedError };

/**
 * The kind's version in force, and what its onVersionChange says of a job whose journal another
 * version started. A job without a journal, or whose journal started before versions were recorded
 * (no `version`), opens as recorded: there is nothing to compare.
 */
export function openUnder(
  item: Pick<JobItem, "id" | "kind" | "steps" | "version">,
  kind: Pick<KindDefinition, "version" | "handler" | "onVersionChange">,
): Opening {
  const version = kindVersionOf(kind);
  const from = item.version;
  if (item.steps === undefined || from === undefined || from === version) return { version, as: "recorded" };
  if (kind.onVersionChange === "restart") return { version, as: "restart" };
  if (kind.onVersionChange === "pause")
    return { version, as: "refused", error: new VersionChangedError(item.id, item.kind, from, version) };
  return { version, as: "recorded" };
}

/** Why `ctx.version(name, range)`'s range can't be: two whole numbers, from <= to. */
export function versionRangeProblem(name: string, range: unknown): string | undefined {
  const ok =
    Array.isArray(range) &&
    range.length === 2 &&
    range.every((v) => Number.isSafeInteger(v) && v >= 0) &&
    range[0] <= range[1];
  return ok ? undefined : `version "${name}": the range must be [from, to], whole numbers 0 <= from <= to`;
}

/**
 * The version `ctx.version` answers: a recorded one (the caller checks it is still within the
 * range); else `from` when the journal holds a record of a call past this point (a run of older code
 * went by without asking), `to` when none.
 */
export function versionToTake(
  recorded: StepRecord | undefined,
  range: readonly [number, number],
  journalGoesPast: boolean,
): { value: number; fresh: boolean } {
  if (recorded) return { value: JSON.parse(recorded.v ?? "null") as number, fresh: false };
  return { value: journalGoesPast ? range[0] : range[1], fresh: true };
}

/** Throws DurableMisuseError for a bad range (the same on every attempt: the job ends dead). */
export function checkVersionRange(name: string, range: unknown): void {
  const problem = versionRangeProblem(name, range);
  if (problem) throw new DurableMisuseError(problem);
}
