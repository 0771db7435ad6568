import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import type { PoolKindSpec } from "../../lib/declarations/pool-kind.ts";
import { loadAppDeclarationsSync } from "../../project/app-declarations.ts";
import { AppModuleError } from "../../project/app-module.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * project/app-declarations.ts: an app module's declarations read synchronously (the SST component's
 * constructor can't await), in a child process; the errors loadAppModule gives, naming the file.
 */

const dir = mkdtempSync(join(tmpdir(), "skyforge-declarations-"));
symlinkSync(join(projectRoot, "node_modules"), join(dir, "node_modules"), "dir");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const defineApp = join(projectRoot, "lib/declarations/define-app.ts");
const refusal = (path: string) => {
  try {
    loadAppDeclarationsSync(path, dir);
  } catch (err) {
    expect(err).toBeInstanceOf(AppModuleError);
    return (err as Error).message;
  }
  throw new Error(`${path} was not refused`);
};

describe("loadAppDeclarationsSync", () => {
  test("reads this repo's app (top-level await and all): its queues and pool kinds as declared, which export, which files", () => {
    const loaded = loadAppDeclarationsSync("app/index.ts", projectRoot);
    expect(loaded.exportName).toBe("app");
    expect(loaded.app.queues).toEqual(JSON.parse(JSON.stringify(app.queues)));
    const capacities = (kinds: readonly PoolKindSpec[]) =>
      kinds.map(({ name, queue, soft, hard }) => [name, queue, soft, hard]);
    expect(capacities(loaded.app.poolKinds)).toEqual(capacities(app.poolKinds));
    expect(loaded.app.kinds.map((k) => k.name)).toEqual(app.kinds.map((k) => k.name));
    expect(loaded.inputs).toContain(join(projectRoot, "app/kinds/echo.ts"));
    expect(loaded.inputs).toContain(defineApp);
    // A key function comes back as a function (the validator checks one is there), not as data.
    const debounced = loaded.app.kinds.find((k) => k.debounce);
    expect(typeof debounced?.debounce?.key).toBe("function");
  });

  test("takes the default export too", () => {
    writeFileSync(
      join(dir, "default.ts"),
      `import { defineApp } from ${JSON.stringify(defineApp)};\nexport default defineApp({ queues: [], kinds: [], poolKinds: [], schedules: [], rateLimits: [] });\n`,
    );
    const loaded = loadAppDeclarationsSync("default.ts", dir);
    expect(loaded.exportName).toBe("default");
    expect(loaded.file).toBe(join(dir, "default.ts"));
  });

  test("a missing module, one that doesn't compile, throws, or exports no defineApp value: one error naming it", () => {
    expect(refusal("nowhere.ts")).toMatch(/nowhere\.ts: no such app module$/);
    writeFileSync(join(dir, "broken.ts"), "export const app = {;\n");
    expect(refusal("broken.ts")).toMatch(/broken\.ts does not compile:\n.*broken\.ts:1:/s);
    writeFileSync(join(dir, "throws.ts"), 'throw new Error("no database in the deploy");\n');
    expect(refusal("throws.ts")).toMatch(/throws\.ts: no database in the deploy$/);
    writeFileSync(join(dir, "plain.ts"), "export const app = { queues: [] };\n");
    expect(refusal("plain.ts")).toMatch(/plain\.ts exports no defineApp value: export it as/);
  });
});
