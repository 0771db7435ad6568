import { UsageError } from "../errors.ts";
import type { JobItem } from "../store/job-item.ts";
import { restartJournal } from "../store/step-ops.ts";
import type { StepRecord } from "../store/step-record.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { Journal } from "./journal.ts";
import { openUnder } from "./versions.ts";

/** A run's journal as it opens: the records it replays, and the kind's version it records under. */
export interface OpenJournal {
  steps: Record<string, StepRecord>;
  journal: Journal;
  mapExists: boolean;
  /** The kind's version in force, which the run's first record of a new journal records as the job's. */
  version: string;
  /** Settles once the journal may be written: at once, or after a "restart" dropped the old one. */
  ready: Promise<void>;
}

/**
 * Opens a run's journal under its kind's version (docs/guide/durable-jobs.md, "Versions"): a job
 * whose journal another version started goes on as recorded ("continue"), is refused before its
 * handler reads a record ("pause": `onDiverged` hears the VersionChangedError at once), or starts
 * over with an empty journal ("restart": `ready` waits for restartJournal's write under the fence).
 */
export function openJournal(
  deps: Pick<DurableDeps, "store" | "registry" | "journalLimits">,
  item: JobItem,
  fence: string,
  onDiverged: (error: Error) => void,
): OpenJournal {
  const kind = deps.registry.get(item.kind);
  const opening = kind ? openUnder(item, kind) : undefined;
  const version = opening?.version ?? "";
  if (opening?.as === "restart") {
    const steps: Record<string, StepRecord> = {};
    const ready = restartJournal(deps.store, item.id, fence, version).then((restarted) => {
      if (!restarted) throw new UsageError("this run lost its lease before its journal restarted");
    });
    ready.catch(() => {}); // Its writes and its suspend wait on it and end the run with its error.
    return {
      steps,
      journal: new Journal(item.id, steps, onDiverged, deps.journalLimits),
      mapExists: false,
      version,
      ready,
    };
  }
  const steps = { ...(item.steps ?? {}) };
  const journal = new Journal(item.id, steps, onDiverged, deps.journalLimits);
  if (opening?.as === "refused") journal.refuse(opening.error);
  return { steps, journal, mapExists: item.steps !== undefined, version, ready: Promise.resolve() };
}
