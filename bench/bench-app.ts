import { app } from "../app/index.ts";
import { defineApp } from "../lib/declarations/define-app.ts";
import { type CompletionStart, recordingCompletionKind } from "./completion-kind.ts";
import { FAIL_ONCE_KIND, failOnceKind } from "./fail-once-kind.ts";
import { type Lane, withLane } from "./lanes.ts";
import { noopKind } from "./noop-kind.ts";

/** The kinds the bench can run: the app's Lambda kinds and its own no-op kind. */
export const benchKindNames = () => [...app.kinds.map((k) => k.name), noopKind.name];

/** What the bench runs: one of the app's Lambda kinds, on a lane, optionally failing once per job. */
export interface BenchRun {
  kind: string;
  lane: Lane;
  failOnce: boolean;
}

/** The kind name the bench enqueues for `run`. */
export const enqueuedKind = (run: BenchRun) => (run.failOnce ? FAIL_ONCE_KIND : run.kind);

/**
 * The app the bench runs: the project's own, plus the bench's group completion kind (kept out of
 * app/, so a deploy never carries it). With `run`, the chosen kind is replaced by a bench-only copy
 * declaring its lane, and `--fail-once` adds the bench's fail-once kind wrapping that copy. Its
 * queues and workers are otherwise the app's. Throws the app's DeclarationError when the engine
 * refuses the declarations (a lane it does not take).
 */
export function benchApp(onCompletionStart: (start: CompletionStart) => void, run?: BenchRun) {
  const completion = recordingCompletionKind(onCompletionStart);
  if (!run) return defineApp({ ...app, kinds: [...app.kinds, noopKind, completion] });
  const own = [...app.kinds, noopKind];
  const base = own.find((k) => k.name === run.kind);
  if (!base) throw new Error(`the app has no Lambda kind "${run.kind}"`);
  const onLane = withLane(base, run.lane);
  const kinds = own.map((k) => (k === base ? onLane : k));
  return defineApp({
    ...app,
    kinds: [...kinds, ...(run.failOnce ? [failOnceKind(onLane)] : []), completion],
  });
}
