import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type PackageEntry,
  type PackageName,
  packageDir,
  packageSpecs,
} from "../../scripts/build-packages.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * What each package's manifest promises matches what the build makes (scripts/build-packages.ts's
 * table): an export for every entry with types, at the files the build writes; the bin at its
 * entry; one license, MIT, for the repo and every package; a Node range that Lambda's runtimes
 * (nodejs22.x, nodejs24.x) fall in, for the engine package.
 */
interface Manifest {
  name: string;
  license?: string;
  engines?: { node?: string };
  bin?: Record<string, string>;
  exports?: Record<string, string | { types: string; default: string }>;
  files?: string[];
}
const manifestOf = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
const names = Object.keys(packageSpecs) as PackageName[];

describe("the packages' manifests", () => {
  it("the repo and every package are MIT, each with the same LICENSE file", () => {
    const license = readFileSync(join(projectRoot, "LICENSE"), "utf8");
    expect(license).toMatch(/^MIT License\n/);
    expect(manifestOf(projectRoot).license).toBe("MIT");
    for (const name of names) {
      expect(manifestOf(packageDir(name)).license, name).toBe("MIT");
      expect(readFileSync(join(packageDir(name), "LICENSE"), "utf8"), name).toBe(license);
    }
  });

  for (const name of names) {
    it(`${name}: an export for each entry with types, at the build's files; every export is built`, () => {
      const manifest = manifestOf(packageDir(name));
      const built: readonly PackageEntry[] = packageSpecs[name].entries;
      const exported = Object.entries(manifest.exports ?? {}).filter(([key]) => key !== "./package.json");
      const expected = built
        .filter((e) => e.types || e.untypedExport)
        .map((e) => ({
          ...(e.types ? { types: `./dist/types/${e.source.replace(/\.ts$/, ".d.ts")}` } : {}),
          default: `./dist/${e.out}.js`,
        }));
      expect(
        exported
          .map(([, target]) => target)
          .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      ).toEqual(expected.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))));
      for (const target of Object.values(manifest.bin ?? {})) {
        expect(built.map((e) => `./dist/${e.out}.js`)).toContain(target);
      }
    });
  }

  it("skyforge: the bin, its changelog, and Node from 22.5 (Lambda's nodejs22.x and nodejs24.x)", () => {
    const manifest = manifestOf(packageDir("skyforge"));
    expect(manifest.name).toBe("skyforge");
    expect(manifest.bin).toEqual({ skyforge: "./dist/bin.js" });
    expect(manifest.exports?.["."]).toBeDefined();
    expect(manifest.exports?.["./client"]).toBeDefined();
    expect(manifest.engines?.node).toBe(">=22.5.0");
    expect(manifest.files).toEqual(expect.arrayContaining(["dist", "README.md", "CHANGELOG.md", "LICENSE"]));
    expect(existsSync(join(packageDir("skyforge"), "CHANGELOG.md"))).toBe(true);
    const version = JSON.parse(readFileSync(join(packageDir("skyforge"), "package.json"), "utf8")).version;
    expect(readFileSync(join(packageDir("skyforge"), "CHANGELOG.md"), "utf8")).toContain(`## ${version}`);
  });
});
