import { tmpdir } from "node:os";
import { tierOf } from "../../lib/declarations/queue-declaration.ts";
import { ConfigError } from "../../lib/errors.ts";
import { type ChildUserSettings, DEFAULT_CHILD_UIDS } from "../../lib/pool/child-users.ts";
import { POOL_BAD_CONFIG_EXIT_CODE } from "../../lib/pool/pool-options.ts";
import { PoolRunner } from "../../lib/pool/pool-runner.ts";
import { engineFromEnv } from "../runtime-config.ts";

/**
 * The Fargate pool task (`node pool.mjs` in infra/pool.Dockerfile; `npm start` runs it locally).
 * SKYFORGE_POOL_DRAIN_SECONDS: how long running jobs get after SIGTERM; keep it under the ECS
 * task's stopTimeout (30 s by default, 120 s at most). The long poll in progress
 * (SKYFORGE_POOL_WAIT_SECONDS, 20 s by default) is waited out in the same window, not aborted.
 * SKYFORGE_POOL_CHILD_USERS: "required" (the Fargate task, infra/pool.ts) or "preferred" (the
 * default: npm start), whether children must run as users of their own (lib/pool/child-users.ts);
 * SKYFORGE_POOL_CHILD_FIRST_UID moves their uid range (2^24 uids) where a host needs it elsewhere.
 */
const drainSeconds = Number(process.env.SKYFORGE_POOL_DRAIN_SECONDS ?? 25);
const waitSeconds = Number(process.env.SKYFORGE_POOL_WAIT_SECONDS ?? 20);
const metricsEverySeconds = Number(process.env.SKYFORGE_POOL_METRICS_SECONDS ?? 60);

/** How children run as users of their own; a ConfigError for a setting the pool can't read. */
function childUsers(): ChildUserSettings {
  const separate = process.env.SKYFORGE_POOL_CHILD_USERS ?? "preferred";
  if (separate !== "required" && separate !== "preferred") {
    throw new ConfigError(`SKYFORGE_POOL_CHILD_USERS must be "required" or "preferred", got "${separate}"`);
  }
  const first = process.env.SKYFORGE_POOL_CHILD_FIRST_UID;
  const firstUid = first === undefined ? DEFAULT_CHILD_UIDS.firstUid : Number(first);
  if (
    !Number.isSafeInteger(firstUid) ||
    firstUid < 1 ||
    firstUid + DEFAULT_CHILD_UIDS.uidCount > 2 ** 32 - 1
  ) {
    throw new ConfigError(
      `SKYFORGE_POOL_CHILD_FIRST_UID must be a uid from 1 to 2^32 - 2^24 - 1, got "${first}"`,
    );
  }
  return { separate, firstUid, uidCount: DEFAULT_CHILD_UIDS.uidCount, homeParent: tmpdir() };
}

/**
 * The engine and the runner. A configuration the pool can't run at all (a bad SKYFORGE_POOL_CONFIG)
 * ends it; a kind whose program is missing is refused by the runner, which serves the others.
 */
function startUp() {
  try {
    const { engine, logger } = engineFromEnv("skyforge-pool");
    const kinds = engine.poolKinds;
    const served = new Set(kinds.map((k) => k.queue));
    const runner = new PoolRunner(engine, {
      kinds,
      queues: engine.queues.filter((q) => tierOf(q) === "pool" && served.has(q.name)),
      baseEnv: process.env,
      cwd: process.cwd(),
      waitSeconds,
      childUsers: childUsers(),
    });
    return { logger, kinds, runner };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Restarting can't fix it: the exit code tells a supervisor (npm start's) not to try.
    console.error(err.message);
    process.exit(POOL_BAD_CONFIG_EXIT_CODE);
  }
}

const { logger, kinds, runner } = startUp();
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
        logger.error("drain failed", { error: String(err) });
        process.exit(1);
      },
    );
  });
}
