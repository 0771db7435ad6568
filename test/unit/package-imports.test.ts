import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bundlePackage, type PackageName, packageDir } from "../../scripts/build-packages.ts";
import { bareSpecifiers, type PackageManifest, undeclaredImports } from "../../scripts/package-imports.ts";

/**
 * Each package's build loads only packages its manifest declares (scripts/package-imports.ts), so
 * an install outside this repo finds all of them and none comes from this repo's node_modules by
 * accident; and the `skyforge` package holds none of this repo's demo app (app/).
 */
const outdirs: string[] = [];
afterAll(() => {
  for (const dir of outdirs) rmSync(dir, { recursive: true, force: true });
});

async function built(
  name: PackageName,
): Promise<{ dist: string; inputs: string[]; manifest: PackageManifest }> {
  const dist = mkdtempSync(join(tmpdir(), `skyforge-${name}-dist-`));
  outdirs.push(dist);
  const inputs = await bundlePackage(name, dist);
  const manifest = JSON.parse(
    readFileSync(join(packageDir(name), "package.json"), "utf8"),
  ) as PackageManifest;
  return { dist, inputs, manifest };
}

describe("the packages' imports", { timeout: 60_000 }, () => {
  it("reads packages off built JavaScript and declarations, not paths, URLs or Node's own modules", () => {
    const js = [
      'import { a } from "zod";',
      'import "side-effect";',
      'export { b } from "@aws-sdk/client-s3/dist-es/x";',
      'const m = await import("esbuild");',
      'const dir = dirname(require2.resolve("preact/hooks"));',
      'import { c } from "./chunk-X.js";',
      'import { d } from "node:fs";',
      'import e from "fs/promises";',
      "const f = await import(url.href);",
    ].join("\n");
    expect(bareSpecifiers(js, false).sort()).toEqual(
      ["@aws-sdk/client-s3/dist-es/x", "esbuild", "preact/hooks", "side-effect", "zod"].sort(),
    );
    const dts = [
      '/// <reference types="aws-lambda" />',
      "/**",
      ' * A limit\'s name: its own, else its position from "1".',
      " */",
      'export type T = import("zod").ZodType;',
      '    /** Absent: from "2" on. */',
    ].join("\n");
    expect(bareSpecifiers(dts, true).sort()).toEqual(["aws-lambda", "zod"]);
  });

  for (const name of ["skyforge", "client"] as const) {
    it(`${name}: every package its build loads is declared`, async () => {
      const { dist, manifest } = await built(name);
      expect(await undeclaredImports(dist, manifest)).toEqual([]);
    });
  }

  it("a dependency left out of the manifest is found, with the file that loads it", async () => {
    const { dist, manifest } = await built("skyforge");
    const { commander: _, ...rest } = manifest.dependencies ?? {};
    const found = await undeclaredImports(dist, { ...manifest, dependencies: rest });
    expect(found.map((u) => u.packageName)).toEqual(["commander"]);
    expect(found[0]?.file).toBe("bin.js");
  });

  it("the skyforge package holds no module of this repo's app/", async () => {
    const { inputs } = await built("skyforge");
    expect(inputs.filter((i) => i.startsWith("app/"))).toEqual([]);
    expect(inputs).toContain("lib/declarations/define-app.ts");
  });
});
