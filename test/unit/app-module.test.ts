import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { app as repoApp } from "../../app/index.ts";
import { AppModuleError, loadAppModule } from "../../project/app-module.ts";
import { projectRoot } from "../support/project-copy.ts";

const scratch = mkdtempSync(join(tmpdir(), "app-module-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function write(name: string, text: string): string {
  const file = join(scratch, name);
  writeFileSync(file, text);
  return file;
}

/** An app outside the repo whose one kind throws the engine's UnrecoverableError. */
const throwing = write(
  "throws.ts",
  `import { UnrecoverableError } from "${projectRoot}lib/errors.ts";
import { defineApp } from "${projectRoot}lib/declarations/define-app.ts";
export const app = defineApp({
  queues: [{ name: "default", maxConcurrency: 2, batchSize: 1, batchWindowSeconds: 0, maxReceiveCount: 10, workerTimeoutSeconds: 30 }], poolKinds: [], schedules: [], rateLimits: [],
  kinds: [{ name: "boom", queue: "default", handler: async () => { throw new UnrecoverableError("no"); } }],
});`,
);

describe("loadAppModule", () => {
  it("loads this repo's app under tsx, on the very engine modules the caller runs", () => {
    // In a process of its own under tsx, as `npm start` runs: vitest's module runner would give the
    // bundle's imports of lib/ instances other than its own.
    const script = `
      import { loadAppModule } from "./project/app-module.ts";
      import { UnrecoverableError } from "./lib/errors.ts";
      const repo = await loadAppModule("app/index.ts");
      const outside = await loadAppModule(${JSON.stringify(throwing)});
      const thrown = await outside.app.kinds[0].handler().catch((e) => e);
      console.log(JSON.stringify({
        kinds: repo.app.kinds.map((k) => k.name),
        echoInput: repo.inputs.some((f) => f.endsWith("app/kinds/echo.ts")),
        libInput: repo.inputs.some((f) => f.includes("/lib/")),
        sameClass: thrown instanceof UnrecoverableError,
      }));`;
    const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: projectRoot,
      encoding: "utf8",
    });
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({
      kinds: repoApp.kinds.map((k) => k.name),
      echoInput: true,
      libInput: false,
      sameClass: true,
    });
  });

  it("takes the `default` export as well as `app`, and each load sees the file as it is now", async () => {
    const shape = (kinds: string) =>
      `{ queues: [], kinds: [${kinds}], poolKinds: [], schedules: [], rateLimits: [] }`;
    const file = write("reload.ts", `export default ${shape("")};`);
    expect((await loadAppModule(file)).app.kinds).toEqual([]);
    writeFileSync(file, `export const app = ${shape(`{ name: "later" }`)};`);
    expect((await loadAppModule(file)).app.kinds).toEqual([{ name: "later" }]);
  });

  it("leaves no bundle behind once loaded, however often it is reloaded", async () => {
    const file = write(
      "kept.ts",
      "export const app = { queues: [], kinds: [], poolKinds: [], schedules: [], rateLimits: [] };",
    );
    for (let i = 0; i < 3; i++) await loadAppModule(file);
    // No node_modules above the scratch folder: the bundles go to .skyforge-cache beside the module.
    expect(readdirSync(join(scratch, ".skyforge-cache")).filter((f) => f.startsWith("kept."))).toEqual([]);
  });

  it("names the file when it exports no defineApp value", async () => {
    const file = write("none.ts", "export const nothing = 1;");
    const err = await loadAppModule(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppModuleError);
    expect((err as Error).message).toMatch(/none\.ts exports no defineApp value/);
  });

  it("names the file and the line when it does not compile", async () => {
    const file = write("broken.ts", "export const app = {;\n");
    const err = await loadAppModule(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppModuleError);
    expect((err as Error).message).toMatch(/broken\.ts does not compile:[\s\S]*broken\.ts:1/);
  });

  it("names the file when its declarations are refused", async () => {
    const file = write(
      "refused.ts",
      `import { defineApp } from "${projectRoot}lib/declarations/define-app.ts";
export default defineApp({ queues: [], kinds: [{ name: "x", queue: "nowhere", handler: async () => 1 }], poolKinds: [], schedules: [], rateLimits: [] });`,
    );
    const err = await loadAppModule(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppModuleError);
    expect((err as Error).message).toMatch(/refused\.ts: [\s\S]*nowhere/);
  });

  it("names the file when it does not exist", async () => {
    await expect(loadAppModule(join(scratch, "missing.ts"))).rejects.toThrow(
      /missing\.ts: no such app module/,
    );
  });
});
