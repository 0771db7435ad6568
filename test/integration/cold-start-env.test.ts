import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { buildBundles, defaultRoot, deployedSdkOption } from "../../scripts/bundle-sizes.ts";
import { functionEnv } from "../../scripts/cold-start.ts";

/**
 * The cold-start scenario (`npm run bench -- --scenario cold-start`) times each function's bundle
 * as a fresh `node <bundle>.mjs` under the settings a stage gives it (scripts/cold-start.ts's
 * functionEnv): each must get through its init there, or the scenario fails (a new function's
 * settings missing from it did, once).
 */
it("every function's bundle gets through its init under the cold-start scenario's settings", async () => {
  const outDir = join(defaultRoot, "node_modules", ".cache", `skyforge-cold-start-env-${process.pid}`);
  mkdirSync(outDir, { recursive: true });
  try {
    const bundles = await buildBundles(deployedSdkOption, outDir);
    expect(bundles.length).toBeGreaterThan(0);
    const env = { PATH: process.env.PATH ?? "", ...functionEnv() };
    for (const b of bundles) {
      const run = spawnSync(process.execPath, [b.file], { env, encoding: "utf8", timeout: 20_000 });
      expect(run.status, `${b.name}: ${run.stderr.slice(-2000)}`).toBe(0);
    }
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}, 120_000);
