import { app } from "../app/index.ts";
import { defineApp } from "../lib/app/define-app.ts";
import { type CompletionStart, recordingCompletionKind } from "./completion-kind.ts";

/**
 * The app the bench runs: the project's own, plus the bench's group completion kind (kept out of
 * app/, so a deploy never carries it). Its kinds, queues and workers are otherwise the app's.
 */
export function benchApp(onCompletionStart: (start: CompletionStart) => void) {
  return defineApp({ ...app, kinds: [...app.kinds, recordingCompletionKind(onCompletionStart)] });
}
