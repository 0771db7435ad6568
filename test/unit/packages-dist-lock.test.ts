import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { withPackagesDistLock } from "../support/packages-dist-lock.ts";
import { deferred, withinMs } from "../support/wait.ts";

/**
 * The files that build and pack the packages run in the shared pool, their build-and-pack steps one
 * at a time (test/support/packages-dist-lock.ts): steps never overlap, a failed step lets the next
 * one in, and a test process that dies holding the lock leaves none behind.
 */

it("steps never overlap: each starts once the one before has ended, a failed one included", async () => {
  const events: string[] = [];
  const step =
    (name: string, fail = false) =>
    async () => {
      events.push(`${name} in`);
      // Hands the event loop over, so a second holder (if the lock let one in) would start here.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setTimeout(resolve, 20));
      events.push(`${name} out`);
      if (fail) throw new Error(`${name} failed`);
    };
  const results = await Promise.allSettled([
    withPackagesDistLock(step("a")),
    withPackagesDistLock(step("b", true)),
    withPackagesDistLock(step("c")),
  ]);
  expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "fulfilled", "rejected"]);
  expect(events).toHaveLength(6);
  for (let i = 0; i < events.length; i += 2) {
    const name = events[i]?.split(" ")[0];
    expect(events.slice(i, i + 2)).toEqual([`${name} in`, `${name} out`]);
  }
});

it("a process killed while it holds the lock leaves none: the next step gets it", async () => {
  const holderScript = fileURLToPath(new URL("../support/packages-dist-lock.ts", import.meta.url));
  // Another test process: takes the lock, says so, and holds it until killed.
  const other = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "--input-type=module",
      "-e",
      `const { withPackagesDistLock } = await import(${JSON.stringify(holderScript)});
       await withPackagesDistLock(async () => { console.log("holding"); await new Promise(() => {}); });`,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const holding = deferred();
  other.stdout?.on("data", (d) => {
    if (String(d).includes("holding")) holding.resolve();
  });
  const otherExited = new Promise((resolve) => other.once("exit", resolve));
  try {
    await withinMs(holding.promise, "the other process holding the lock", 20_000);
    let entered = false;
    const mine = withPackagesDistLock(async () => {
      entered = true;
    });
    // Held by the other process: this step waits (the other one holds it until it dies).
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(entered).toBe(false);
    other.kill("SIGKILL");
    await withinMs(mine, "the lock after its holder died", 10_000);
    expect(entered).toBe(true);
  } finally {
    other.kill("SIGKILL");
    await otherExited;
  }
}, 30_000);
