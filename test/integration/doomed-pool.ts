import { PoolRunner } from "../../lib/pool/pool-runner.ts";
import type { Emulators } from "../../local/emulators.ts";
import type { PoolHarness } from "../support/pool-harness.ts";
import { type CrashSwitch, doomedEngine } from "./crash-switch.ts";

/**
 * A second pool on the same table and queue, on clients a crash switch freezes. Its crash is the
 * switch tripping and every child killed with it, as when the process dies: nothing it would send
 * afterwards (heartbeat, hold, finalize, hand-back) ever lands.
 */
export function doomedPool(
  emu: Emulators,
  h: PoolHarness,
): { runner: PoolRunner; crash: CrashSwitch; die(): number } {
  const { engine, crash } = doomedEngine(
    emu,
    h.engine,
    { name: h.queue.name, url: h.urls.url },
    {
      poolKinds: [h.spec],
      // As functions/pool/main.ts names a pool task's runs.
      runner: () => ({ runner: `pool:doomed/${process.pid}` }),
    },
  );
  const runner = new PoolRunner(engine, {
    kinds: [h.spec],
    queues: [h.queue],
    baseEnv: process.env,
    cwd: process.cwd(),
    waitSeconds: 1,
    queueStateTtlMs: 0,
  });
  runner.start();
  return {
    runner,
    crash,
    die() {
      crash.trip();
      runner.killChildren();
      return crash.crashedAt;
    },
  };
}
