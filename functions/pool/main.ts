import { hostname } from "node:os";
import type { App } from "../../lib/declarations/define-app.ts";
import { ConfigError } from "../../lib/errors.ts";
import { poolRunner } from "../../lib/handlers/pool.ts";
import { errorFields } from "../../lib/observability/log.ts";
import { POOL_BAD_CONFIG_EXIT_CODE } from "../../lib/pool/pool-options.ts";
import { appModuleFromEnv, engineFromEnv, poolProcessFromEnv } from "../runtime-config.ts";

/**
 * The Fargate pool task (`node pool.mjs` in infra/pool.Dockerfile; `npm start` runs it locally). Its
 * settings (drain, long poll, metrics, child users) are read and checked by poolProcessFromEnv.
 *
 * The engine and the runner. A configuration the pool can't run at all (a bad SKYFORGE_POOL_CONFIG,
 * a bad setting, an app module that doesn't load) ends it; a kind whose program is missing is
 * refused by the runner, which serves the others.
 *
 * SKYFORGE_APP_MODULE, set by the local stack (`skyforge dev`, `npm start`), names the app module
 * it serves: the pool loads that one (project/app-module.ts) instead of this repo's app/.
 */
async function startUp() {
  try {
    const settings = poolProcessFromEnv();
    const module = appModuleFromEnv();
    const app: App | undefined = module ? await loadApp(module) : undefined;
    // A pool task's attempts name its host (the task) and process in their history.
    const { engine, logger } = engineFromEnv("skyforge-pool", {
      runner: () => ({ runner: `pool:${hostname()}/${process.pid}` }),
      ...(app ? { app } : {}),
    });
    const runner = poolRunner(engine, settings.runner);
    return { logger, kinds: engine.poolKinds, runner, settings };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Restarting can't fix it: the exit code tells a supervisor (npm start's) not to try.
    console.error(err.message);
    process.exit(POOL_BAD_CONFIG_EXIT_CODE);
  }
}

/**
 * The local stack's app module, loaded through project/app-module.ts. Imported by a computed URL so
 * the Fargate bundle (infra/pool.Dockerfile, which never sets SKYFORGE_APP_MODULE) leaves the loader
 * and its esbuild out.
 */
async function loadApp(module: string): Promise<App> {
  const loader = new URL("../../project/app-module.ts", import.meta.url).href;
  const { loadAppModule } = (await import(loader)) as typeof import("../../project/app-module.ts");
  return (await loadAppModule(module)).app;
}

const { logger, kinds, runner, settings } = await startUp();
const { drainSeconds, metricsEverySeconds } = settings;
// Where setpriv is missing, children don't die with the pool by themselves: on any exit that
// skipped the drain (an uncaught error, process.exit), they are killed here. SIGKILL skips this too.
process.on("exit", () => runner.killChildren());
runner.start();
const flusher = setInterval(() => runner.flushMetrics(), metricsEverySeconds * 1000);
logger.info("pool started", {
  kinds: kinds.filter((k) => !runner.refused.has(k.name)).map((k) => `${k.name}(${k.soft}/${k.hard})`),
  refused: [...runner.refused.keys()],
  drainSeconds,
});

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    clearInterval(flusher);
    logger.info("draining", { signal, drainSeconds });
    runner.stop(drainSeconds * 1000).then(
      (report) => {
        logger.info("pool stopped", { ...report });
        process.exit(0);
      },
      (err) => {
        logger.error("drain failed", errorFields(err));
        process.exit(1);
      },
    );
  });
}
