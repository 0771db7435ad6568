import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Logger } from "@aws-lambda-powertools/logger";
import { poolKindsFromEnv } from "../functions/engine-config.ts";
import {
  type Env,
  type LocalStackSettings,
  localStackSettingsFromEnv,
  MAX_LOCAL_PORT,
} from "../functions/env-settings.ts";
import type { App } from "../lib/declarations/define-app.ts";
import { ConfigError } from "../lib/errors.ts";
import type { Log } from "../lib/observability/log.ts";
import { loadAppModule } from "../project/app-module.ts";
import { findAppModule } from "../project/find-app.ts";
import { type AppWatcher, watchAppInputs } from "./app-watcher.ts";
import { type LocalStack, startLocalStack } from "./stack.ts";
import { stackBanner } from "./stack-banner.ts";

export interface DevOptions {
  /** The command and its options, as the usage line names them. */
  usage?: string;
  /** How the banner tells to start from an empty data directory. */
  freshHint?: string;
  /** Where the data lives when SKYFORGE_DATA_DIR is unset (default: `.skyforge/` in the project's folder). */
  defaultDataDir?: string;
  /** The banner's example requests, given the stack's URL (default: one enqueue of the first kind). */
  tryLines?: (url: string) => string[];
  cwd?: string;
  env?: Env;
  /** The pool's entry command and the variables it needs besides (default: the package's built entry). */
  pool?: { command: string[]; env?: Record<string, string> };
}

const DEV_USAGE = "skyforge dev [--app <module>] [--fresh]";

/**
 * `skyforge dev` (and `npm start`, which is this over app/): the embedded local stack
 * (local/stack.ts) over the user's app module, found by project/find-app.ts and loaded by
 * project/app-module.ts, with the same HTTP API, console and CLI endpoints, PORT and
 * SKYFORGE_DATA_DIR honoured. When a file of the app changes, the kinds are reloaded in the running
 * stack (LiveApp: the queued jobs stay in their queues) and one line says so; a module that does
 * not load prints its error in one block, and the previous kinds keep serving.
 *
 * Resolves once the stack has stopped (SIGINT or SIGTERM) with the exit code: 0, 1 if the shutdown
 * failed, 2 for a command line or a configuration that can't run (no app found: one usage line).
 */
export async function runDev(argv: string[], options: DevOptions = {}): Promise<number> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const usage = options.usage ?? DEV_USAGE;
  let args: { app?: string | undefined; fresh: boolean };
  try {
    args = parseArgs({
      args: argv,
      options: { app: { type: "string" }, fresh: { type: "boolean", default: false } },
    }).values;
  } catch (err) {
    console.error(`${(err as Error).message}\nusage: ${usage}`);
    return 2;
  }
  const found = findAppModule(cwd, args.app);
  if (!found.found) {
    console.error(`no app to run: ${found.reason}. usage: ${usage}`);
    return 2;
  }
  const shown = relative(cwd, found.file).startsWith("..") ? found.file : relative(cwd, found.file);

  let stack: LocalStack;
  let settings: LocalStackSettings | undefined;
  let app: App;
  let watcher: AppWatcher;
  let reloads: Reloads;
  try {
    // One checked read of the environment: a bad value is one message naming the variable.
    settings = localStackSettingsFromEnv(env);
    const loaded = await loadAppModule(found.file);
    app = loaded.app;
    const poolKinds = poolKindsFromEnv(app, env);
    const log = stackLog(settings);
    const dataDir = settings.dataDir
      ? resolve(cwd, settings.dataDir)
      : (options.defaultDataDir ?? join(found.projectDir, ".skyforge"));
    const pool = poolEntry(env, found.file, options.pool);
    stack = await startLocalStack({
      app,
      poolKinds,
      port: settings.port,
      // The broker beside it, on the next port, so a browser's url survives a restart (any when 0).
      realtimePort: settings.port === 0 ? 0 : settings.port + 1,
      log,
      tickSeconds: settings.tickSeconds,
      dataDir,
      fresh: args.fresh,
      ...(pool ? { pool } : {}),
    });
    reloads = new Reloads(stack, found.file, shown, env);
    watcher = watchAppInputs(() => reloads.request());
    watcher.watch(loaded.inputs);
    reloads.watcher = watcher;
    const banner = stackBanner({
      stack,
      app,
      poolKinds,
      tickSeconds: settings.tickSeconds,
      dataDir,
      shown,
      tryLines: options.tryLines?.(stack.url),
      freshHint: options.freshHint ?? "skyforge dev --fresh",
    });
    console.log(banner.join("\n"));
  } catch (err) {
    // A configuration that can't run (a bad variable or pool file, a module that doesn't load, a
    // data directory in use, a PORT another process listens on): its message and what to do, no
    // trace. Anything else is a bug, and throws.
    if ((err as NodeJS.ErrnoException | undefined)?.code === "EADDRINUSE") {
      // Only startLocalStack listens, and it runs after the settings are read.
      console.error(portInUse(Number((err as { port?: number }).port), settings?.port ?? 0));
      return 2;
    }
    if (!(err instanceof ConfigError)) throw err;
    console.error(err.message);
    return 2;
  }

  return new Promise<number>((resolve) => {
    let stopping = false;
    const stop = () => {
      if (stopping) return;
      stopping = true;
      console.log("\nstopping…");
      watcher.close();
      reloads
        .settled()
        .then(() => stack.stop())
        .then(
          () => resolve(0),
          (err) => {
            console.error("shutdown failed", err);
            resolve(1);
          },
        );
    };
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, stop);
  });
}

/**
 * The reloads: one at a time, and a change during one asks for one more after it. Each loads the
 * module again (a new bundle: project/app-module.ts) and hands its app to the stack.
 */
class Reloads {
  watcher: AppWatcher | undefined;
  private running: Promise<void> | undefined;
  private again = false;

  private readonly stack: LocalStack;
  private readonly file: string;
  private readonly shown: string;
  private readonly env: Env;

  constructor(stack: LocalStack, file: string, shown: string, env: Env) {
    this.stack = stack;
    this.file = file;
    this.shown = shown;
    this.env = env;
  }

  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.once();
      } while (this.again);
    })().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once no reload is running. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async once(): Promise<void> {
    try {
      const loaded = await loadAppModule(this.file);
      // The folders to watch follow the module's imports even if the stack refuses the new app.
      this.watcher?.watch(loaded.inputs);
      await this.stack.reload(loaded.app, poolKindsFromEnv(loaded.app, this.env));
      console.log(`reloaded ${this.shown}: kinds ${loaded.app.kinds.map((k) => k.name).join(", ")}`);
    } catch (err) {
      const detail = err instanceof ConfigError ? err.message : ((err as Error).stack ?? String(err));
      console.error(`${this.shown} not reloaded; the previous kinds keep serving:\n${detail}`);
    }
  }
}

function stackLog(settings: LocalStackSettings): Log {
  const logger = new Logger({ serviceName: "skyforge-local", logLevel: settings.logLevel });
  return {
    debug: (m, a) => logger.debug(m, a ?? {}),
    info: (m, a) => logger.info(m, a ?? {}),
    warn: (m, a) => logger.warn(m, a ?? {}),
    error: (m, a) => logger.error(m, a ?? {}),
  };
}

/** The local pool entry (functions/pool/dev-main.ts) built beside this file, in the `skyforge` package. */
const BUILT_POOL_ENTRY = fileURLToPath(new URL("./pool.js", import.meta.url));

/**
 * The pool child: the given entry (this repo's source, run by Node itself: scripts/start.ts), else the
 * package's built one, with the caller's environment (PATH for python3, SKYFORGE_POOL_CONFIG for
 * extra kinds) plus SKYFORGE_APP_MODULE, so it runs the same app module. Without either, no pool
 * runs (the pool-tier queues hold their jobs).
 */
function poolEntry(env: Env, appModule: string, given: DevOptions["pool"]) {
  const entry =
    given ?? (existsSync(BUILT_POOL_ENTRY) ? { command: [process.execPath, BUILT_POOL_ENTRY] } : undefined);
  if (!entry) return undefined;
  return {
    command: entry.command,
    baseEnv: env,
    settings: { ...entry.env, SKYFORGE_APP_MODULE: appModule },
    drainSeconds: 10,
    waitSeconds: 2,
  };
}

/**
 * The answer to a port another process holds: PORT's own, or the realtime broker's (PORT + 1), and
 * a PORT past it to try.
 */
function portInUse(inUse: number, port: number): string {
  const whose = port !== 0 && inUse === port + 1 ? ` (the realtime broker's, PORT + 1)` : "";
  const next = inUse + 1 <= MAX_LOCAL_PORT ? inUse + 1 : 0;
  return `port ${inUse}${whose} is in use: stop the other process or set PORT=${next}`;
}
