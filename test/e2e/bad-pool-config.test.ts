import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";

const dir = mkdtempSync(join(tmpdir(), "skyforge-bad-pool-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("npm start refuses a bad SKYFORGE_POOL_CONFIG with one message naming the file and every problem, no trace", async () => {
  const file = join(dir, "pool.json");
  writeFileSync(
    file,
    JSON.stringify({ kinds: { "rb-size": { soft: "two" }, "py-digest": { queue: "default" } } }),
  );
  const child = spawn("npm", ["start", "--silent"], {
    env: { ...process.env, PORT: "0", SKYFORGE_POOL_CONFIG: file, SKYFORGE_DATA_DIR: join(dir, "data") },
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
    const timer = setTimeout(() => reject(new Error(`npm start did not exit:\n${output}`)), 30_000);
    child.once("exit", (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  expect(code).toBe(2);
  expect(output).toContain(`${file}: 2 problem(s): `);
  expect(output).toContain("kinds.rb-size.soft:");
  expect(output).toContain('py-digest: queue "default" is served by Lambda, not the pool');
  expect(output).not.toMatch(/^\s+at /m);
});
