import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { findProgram } from "../../lib/pool/child-program.ts";
import { isRunning } from "../../local/process-running.ts";
import { SCRIPTED_CHILD } from "../support/pool-harness.ts";
import { waitFor } from "../support/wait.ts";

// Where setpriv is missing (or an operator starts a child some other way), nothing kills a child
// whose pool died: it must notice and stop, even mid-job. Each child program here runs under a
// stand-in parent that is SIGKILLed while the child works. The child's stdin stays open (this test
// holds it), so only the parent's death can stop it.

/** /proc/<pid>/stat, after the parenthesised command name: state, …, utime at index 11. */
function stat(pid: number): string[] | undefined {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return undefined;
  return readFileSync(file, "utf8")
    .replace(/^.*\) /s, "")
    .split(" ");
}

const cpuTicks = (pid: number) => Number(stat(pid)?.[11] ?? 0);

const parents: ChildProcessWithoutNullStreams[] = [];
const orphans: number[] = [];
afterEach(() => {
  for (const p of parents.splice(0)) p.kill("SIGKILL");
  for (const pid of orphans.splice(0)) if (isRunning(pid)) process.kill(pid, "SIGKILL");
});

/** A parent process that starts `argv` on its own stdin (ours) and prints the child's pid. */
async function underStandInParent(
  argv: readonly string[],
): Promise<{ parent: ChildProcessWithoutNullStreams; child: number }> {
  const script = `
    const c = require("node:child_process").spawn(${JSON.stringify(argv[0])}, ${JSON.stringify(argv.slice(1))},
      { stdio: ["inherit", "ignore", "inherit"] });
    console.log(c.pid);
    setInterval(() => {}, 60000);`;
  const parent = spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "pipe"] });
  parents.push(parent);
  const [line] = await createInterface({ input: parent.stdout })
    [Symbol.asyncIterator]()
    .next()
    .then((r) => [r.value as string]);
  const child = Number(line);
  orphans.push(child);
  return { parent, child };
}

const request = (payload: unknown) => `${JSON.stringify({ id: "j1", kind: "k", attempt: 1, payload })}\n`;
const python3 = findProgram("python3", { cwd: process.cwd(), path: process.env.PATH });

describe("a child whose pool died stops, even mid-job", () => {
  it.for([
    { name: "children/digest.py", argv: [python3 ?? "python3", "children/digest.py"], busy: "cpu" },
    { name: "children/digest.mjs", argv: [process.execPath, "children/digest.mjs"], busy: "cpu" },
    { name: "scripted.mjs", argv: [process.execPath, SCRIPTED_CHILD], busy: "hang" },
  ])("$name", async ({ name, argv, busy }, { annotate }) => {
    if (name.endsWith(".py") && !python3) return; // no Python here: the demo child can't run at all
    const { parent, child } = await underStandInParent(argv);
    parent.stdin.write(request(busy === "cpu" ? { text: "x", rounds: 10_000_000 } : { act: "hang" }));
    // Mid-job: the digest has burned CPU on it (100 ticks is a second on Linux); the hang is mid-job at once.
    if (busy === "cpu")
      await waitFor(async () => cpuTicks(child) >= 30, `${name} to be computing`, 10_000, 20);
    expect(isRunning(child)).toBe(true);
    parent.kill("SIGKILL");
    const diedAt = Date.now();
    await waitFor(async () => !isRunning(child), `${name} to stop once its parent is gone`, 1000, 10);
    const stoppedMs = Date.now() - diedAt;
    await annotate(`stopped ${stoppedMs} ms after its parent was SIGKILLed`);
    expect(stoppedMs).toBeLessThanOrEqual(1000);
  });
});
