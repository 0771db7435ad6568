import { afterEach } from "vitest";
import type { WarmChild } from "../../lib/pool/warm-child.ts";
import { withinMs } from "./wait.ts";

/**
 * Every child a file's tests start, with a promise of its exit: after each test all of them are
 * killed and their exits awaited (each test's within `boundMs`), so no child outlives its test.
 */
export function childrenReapedAfterEach(boundMs: number): Map<WarmChild, Promise<void>> {
  const tracked = new Map<WarmChild, Promise<void>>();
  afterEach(async () => {
    const all = [...tracked];
    tracked.clear();
    for (const [child] of all) child.kill();
    await withinMs(Promise.all(all.map(([, exited]) => exited)), "exit of every child", boundMs);
  });
  return tracked;
}
