import { type FSWatcher, watch } from "node:fs";
import { dirname } from "node:path";

/** Watches an app module's source folders; `watch()` again with a new load's inputs moves it. */
export interface AppWatcher {
  watch(inputs: readonly string[]): void;
  close(): void;
}

/** What a change to counts as a change to the app: sources and the JSON they may import. */
const SOURCE = /\.(?:[cm]?[jt]sx?|json)$/;

/**
 * Calls `onChange` once a burst of changes to source files in the folders of `inputs` has been quiet
 * for `quietMs` (an editor's save is often a write and a rename, a formatter's a second write).
 * Whole folders, not just the inputs: a kind file created before the line that imports it is
 * saved, or a file an import names before it exists, counts too. One watcher per folder, not
 * recursive, so a project's node_modules is never walked.
 */
export function watchAppInputs(onChange: () => void, quietMs = 150): AppWatcher {
  const watchers = new Map<string, FSWatcher>();
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const changed = (filename: string | null) => {
    if (closed || (filename !== null && !SOURCE.test(filename))) return;
    clearTimeout(timer);
    timer = setTimeout(onChange, quietMs);
  };
  return {
    watch(inputs) {
      if (closed) return;
      const folders = new Set(inputs.map((file) => dirname(file)));
      for (const [folder, watcher] of watchers) {
        if (folders.has(folder)) continue;
        watcher.close();
        watchers.delete(folder);
      }
      for (const folder of folders) {
        if (watchers.has(folder)) continue;
        try {
          const watcher = watch(folder, { persistent: false }, (_event, filename) => changed(filename));
          // A folder removed while watched: its watcher ends; the next load's inputs say what to watch.
          watcher.on("error", () => {
            watcher.close();
            watchers.delete(folder);
          });
          watchers.set(folder, watcher);
        } catch {
          // A folder gone between the load and now: nothing to watch there.
        }
      }
    },
    close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
