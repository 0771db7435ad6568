import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "skyforge-bad-pool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `npm start` with extra environment until it exits (bounded), returning its code and output. */
async function startRefused(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn("npm", ["start", "--silent"], {
    env: { ...process.env, PORT: "0", SKYFORGE_DATA_DIR: join(dir, "data"), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`npm start did not exit:\n${output}`));
    }, 30_000);
    child.once("exit", (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { code, output };
}

it("npm start refuses a bad SKYFORGE_POOL_CONFIG with one message naming the file and every problem, no trace", async () => {
  const file = join(dir, "pool.json");
  writeFileSync(
    file,
    JSON.stringify({ kinds: { "rb-size": { soft: "two" }, "py-digest": { queue: "default" } } }),
  );
  const { code, output } = await startRefused({ SKYFORGE_POOL_CONFIG: file });
  expect(code).toBe(2);
  expect(output).toContain(`${file}: 2 problem(s): `);
  expect(output).toContain("kinds.rb-size.soft:");
  expect(output).toContain('py-digest: queue "default" is served by Lambda, not the pool');
  expect(output).not.toMatch(/^\s+at /m);
});

it("npm start refuses a bad SKYFORGE_TICK_SECONDS, PORT or LOG_LEVEL through the checked config: one line naming it, exit 2", async () => {
  const tick = await startRefused({ SKYFORGE_TICK_SECONDS: "soon" });
  expect(tick.code).toBe(2);
  expect(tick.output).toContain('SKYFORGE_TICK_SECONDS must be a number above 0, got "soon"');
  const port = await startRefused({ PORT: "http" });
  expect(port.code).toBe(2);
  expect(port.output).toContain('PORT must be a whole number from 0 to 65534, got "http"');
  const level = await startRefused({ LOG_LEVEL: "loud" });
  expect(level.code).toBe(2);
  expect(level.output).toContain(
    'LOG_LEVEL must be one of TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL, SILENT, got "loud"',
  );
  expect(port.output).not.toMatch(/^\s+at /m);
});

it("npm start on a port in use says so in one line with the way out, no trace, and exits non-zero", async () => {
  // The realtime broker listens first, on PORT + 1: that one must be free for PORT's answer.
  const other = await holdPort((held) => held + 1);
  try {
    const { code, output } = await startRefused({ PORT: String(other.port) });
    expect(code).not.toBe(0);
    expect(output.trim()).toBe(
      `port ${other.port} is in use: stop the other process or set PORT=${other.port + 1}`,
    );
  } finally {
    await other.close();
  }
});

it("npm start with the realtime broker's port (PORT + 1) in use names it in one line, no trace, and exits 2", async () => {
  const other = await holdPort((held) => held - 1);
  try {
    const { code, output } = await startRefused({ PORT: String(other.port - 1) });
    expect(code).toBe(2);
    expect(output.trim()).toBe(
      `port ${other.port} (the realtime broker's, PORT + 1) is in use: stop the other process or set PORT=${other.port + 1}`,
    );
  } finally {
    await other.close();
  }
});

/** Listens on a loopback port whose neighbour `free(port)` is free at the time (tried until one is). */
async function holdPort(
  free: (held: number) => number,
): Promise<{ port: number; close: () => Promise<void> }> {
  for (;;) {
    const held = createServer();
    await new Promise<void>((resolve) => held.listen(0, "127.0.0.1", resolve));
    const port = (held.address() as { port: number }).port;
    const close = () => new Promise<void>((resolve) => held.close(() => resolve()));
    const probe = createServer();
    const neighbourFree = await new Promise<boolean>((resolve) => {
      probe.once("error", () => resolve(false));
      probe.listen(free(port), "127.0.0.1", () => probe.close(() => resolve(true)));
    });
    if (neighbourFree) return { port, close };
    await close();
  }
}
