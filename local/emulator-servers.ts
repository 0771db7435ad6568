import { Server as HttpServer } from "node:http";
import type { AddressInfo, ListenOptions } from "node:net";
import { Server } from "node:net";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import dynalite from "dynalite";
import { startFauxqs } from "fauxqs";
import { cacheDynaliteConditionParses } from "./dynalite-parse-cache.ts";
import { guardEmulator } from "./emulator-guard.ts";
import { withSynchronousNormal } from "./fauxqs-sqlite-sync.ts";

/**
 * Credentials and region for loopback emulators; nothing here ever reaches AWS. The emulators
 * answer requests signed with this access key id only (local/emulator-guard.ts).
 */
export const LOCAL_AWS = {
  region: "us-east-1",
  credentials: { accessKeyId: "local", secretAccessKey: "local" },
};

/** Every local server binds here, never to all interfaces: the emulators check no signature. */
export const LOOPBACK = "127.0.0.1";

export interface RunningEmulator {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * dynalite in this process, on loopback and a free port, behind the guard from before it listens;
 * `path` keeps its LevelDB store on disk. Its condition parses are kept (local/dynalite-parse-cache.ts).
 */
export async function startDynalite(options: { path?: string } = {}): Promise<RunningEmulator> {
  cacheDynaliteConditionParses();
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.path ? { path: options.path } : {}),
  });
  guardEmulator(server, LOCAL_AWS.credentials.accessKeyId);
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * fauxqs (SQS and S3 on one port) in this process, on loopback and a free port, behind the guard
 * from before it listens; `dataDir` keeps its SQLite store on disk (without an fsync a commit:
 * local/fauxqs-sqlite-sync.ts).
 */
export async function startSqsEmulator(options: { dataDir?: string } = {}): Promise<RunningEmulator> {
  const server = await listeningOnLoopback(() =>
    withSynchronousNormal(() =>
      startFauxqs({
        port: 0,
        host: LOOPBACK,
        logger: false,
        ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      }),
    ),
  );
  try {
    // fauxqs keeps its HTTP server to itself: the guard went on where it listened (below). Should a
    // release listen some other way, the emulator is not served unguarded.
    if (!guardedPortTaken(server.port))
      throw new Error("fauxqs listened where the request guard could not reach its server");
    if (options.dataDir) keepReceiveCountsWhenVisibleAgain(options.dataDir);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return { endpoint: `http://${LOOPBACK}:${server.port}`, stop: () => server.stop() };
}

/**
 * fauxqs 2.4.1 (still so upstream in 2.9.2) stores "visible again" (ChangeMessageVisibility to 0) by
 * writing NULL into `sqs_messages.approximate_receive_count`, a NOT NULL column. The call then fails
 * with a 500 after the message has left the in-flight set, so the message is gone until the next
 * start, and comes back only after its old visibility timeout: every pause hand-back, released job
 * and pool shutdown would lose messages. This trigger turns that write into the intended one: clear
 * the receipt and the deadline, keep the count (as SQS does). It lives in fauxqs's own database,
 * created once fauxqs has made its tables, before anything is sent.
 */
function keepReceiveCountsWhenVisibleAgain(dataDir: string): void {
  const db = new DatabaseSync(join(dataDir, "fauxqs.db"));
  try {
    db.exec(`CREATE TRIGGER IF NOT EXISTS skyforge_visible_again_keeps_receive_count
      BEFORE UPDATE OF approximate_receive_count ON sqs_messages
      WHEN NEW.approximate_receive_count IS NULL
      BEGIN
        UPDATE sqs_messages SET receipt_handle = NULL, visibility_deadline = NULL
          WHERE message_id = NEW.message_id;
        SELECT RAISE(IGNORE);
      END`);
  } finally {
    db.close();
  }
}

let loopbackStarts = 0;
const wildcardListen = Server.prototype.listen;
/** HTTP servers guarded as their wildcard listen was narrowed, until their start claims them. */
const guardedServers = new Set<Server>();

/**
 * fauxqs 2.4 listens on 0.0.0.0 whatever it is told (its `host` option only names queue URLs), has
 * no option to bind elsewhere, and does not hand out its HTTP server. While it starts, a listen on
 * all interfaces is pointed at loopback instead, and the server gets the guard before it listens.
 * Nothing else in the local stack listens meanwhile, and a wildcard listen that did would only be
 * narrowed to loopback and guarded, as everything local should be anyway.
 */
async function listeningOnLoopback<T>(start: () => Promise<T>): Promise<T> {
  if (loopbackStarts++ === 0) {
    Server.prototype.listen = function (this: Server, ...args: unknown[]) {
      const [first] = args;
      if (typeof first === "object" && first !== null && isWildcard((first as ListenOptions).host)) {
        args[0] = { ...(first as ListenOptions), host: LOOPBACK };
        if (this instanceof HttpServer) {
          guardEmulator(this, LOCAL_AWS.credentials.accessKeyId);
          guardedServers.add(this);
        }
      }
      return (wildcardListen as (...a: unknown[]) => Server).apply(this, args);
    } as typeof Server.prototype.listen;
  }
  try {
    return await start();
  } finally {
    if (--loopbackStarts === 0) Server.prototype.listen = wildcardListen;
  }
}

const isWildcard = (host: string | undefined) => host === undefined || host === "0.0.0.0" || host === "::";

/** Whether a guarded server listens on `port`; it is claimed (forgotten here) if so. */
function guardedPortTaken(port: number): boolean {
  for (const server of guardedServers) {
    const address = server.address();
    // null: another start's server, still on its way to listening.
    if (address !== null && typeof address !== "string" && address.port === port)
      return guardedServers.delete(server);
  }
  return false;
}
