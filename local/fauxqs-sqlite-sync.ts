import { DatabaseSync } from "node:sqlite";

/**
 * fauxqs keeps its queues (with a data directory) in SQLite in WAL mode, at SQLite's default
 * `synchronous = FULL`: an fsync at every commit, and a job makes three (its send, its receive, its
 * delete). Measured here: 0.27 ms of blocked time a commit against 0.02 ms at NORMAL. In WAL mode,
 * NORMAL keeps every commit through the death of the process (a SIGKILL, a crash: the commit is in
 * the WAL file, and the OS writes it out); only a power cut or an OS crash can take the last
 * commits back, which a local stack on a developer's machine can bear, as SQLite's own docs say of
 * WAL with NORMAL. fauxqs sets its journal mode with one `exec` as it opens its database and hands
 * the connection to no one, so while it starts, that `exec` is followed by the pragma.
 */
const WAL = /^\s*PRAGMA\s+journal_mode\s*=\s*WAL\s*;?\s*$/i;
const ownExec = DatabaseSync.prototype.exec;
let starting = 0;
/** Connections switched to NORMAL so far (a test reads it: fauxqs may change how it opens its database). */
export let sqliteConnectionsSynchronousNormal = 0;

export async function withSynchronousNormal<T>(start: () => Promise<T>): Promise<T> {
  if (starting++ === 0) {
    DatabaseSync.prototype.exec = function (this: DatabaseSync, sql: string) {
      ownExec.call(this, sql);
      if (WAL.test(sql)) {
        ownExec.call(this, "PRAGMA synchronous = NORMAL");
        sqliteConnectionsSynchronousNormal++;
      }
    };
  }
  try {
    return await start();
  } finally {
    if (--starting === 0) DatabaseSync.prototype.exec = ownExec;
  }
}
