import { readdir, readFile } from "node:fs/promises";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";

/**
 * Every package a built package loads must be one its manifest declares, or it resolves from
 * whatever node_modules the install happens to have (this repo's, by accident, while developing).
 * The build leaves every package as an import (scripts/build-packages.ts), so this reads them off
 * the output: in JavaScript, static and dynamic imports, `require` and `require.resolve` (the
 * console finds its vendor files that way); in declarations, imports, `import("…")` types and
 * `/// <reference types>`. A declaration's "x" is also satisfied by "@types/x".
 */

export interface PackageManifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

export interface UndeclaredImport {
  /** The file under dist/ that loads it. */
  file: string;
  specifier: string;
  /** The package the specifier names: what the manifest should declare. */
  packageName: string;
}

const jsPatterns = [
  /\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  /\brequire\d*(?:\.resolve)?\(\s*["']([^"']+)["']\s*\)/g,
];
const declarationPatterns = [
  /\bfrom\s*["']([^"']+)["']/g,
  /\bimport\s*["']([^"']+)["']/g,
  /\bimport\(\s*["']([^"']+)["']\s*\)/g,
  /\/\/\/\s*<reference\s+types=["']([^"']+)["']/g,
];

/**
 * A declaration file without its doc comments' lines (tsc puts each on lines of its own, starting
 * with `/*` or `*`; no declaration starts so): their prose may read like an import (`… from "1"`).
 */
function withoutCommentLines(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*(\/\*|\*)/.test(line))
    .join("\n");
}

/** The specifiers in a file's text that name a package (not a path, a URL or a Node builtin). */
export function bareSpecifiers(text: string, declarations: boolean): string[] {
  const found = new Set<string>();
  const code = declarations ? withoutCommentLines(text) : text;
  for (const pattern of declarations ? declarationPatterns : jsPatterns) {
    for (const match of code.matchAll(pattern)) {
      const specifier = match[1] ?? "";
      if (/^(\.|\/)|^[a-z][a-z0-9+.-]*:/i.test(specifier)) continue; // relative, absolute, node:, file:, data:
      if (specifier.includes("${")) continue; // a template's text: a program written for another process
      if (builtinModules.includes(specifier.split("/")[0] ?? "")) continue;
      found.add(specifier);
    }
  }
  return [...found];
}

/** "@aws-sdk/client-s3/dist" → "@aws-sdk/client-s3"; "preact/hooks" → "preact". */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

async function builtFiles(dist: string): Promise<string[]> {
  const entries = await readdir(dist, { withFileTypes: true, recursive: true });
  return entries
    .filter((e) => e.isFile() && /\.(m?js|d\.ts)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** Every import under `dist` of a package `manifest` doesn't declare (dependencies or peers). */
export async function undeclaredImports(
  dist: string,
  manifest: PackageManifest,
): Promise<UndeclaredImport[]> {
  const declared = new Set([
    manifest.name,
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}),
  ]);
  const undeclared: UndeclaredImport[] = [];
  for (const file of await builtFiles(dist)) {
    const declarations = file.endsWith(".d.ts");
    for (const specifier of bareSpecifiers(await readFile(file, "utf8"), declarations)) {
      const packageName = packageNameOf(specifier);
      const typesPackage = `@types/${packageName.replace(/^@/, "").replace("/", "__")}`;
      if (declared.has(packageName) || (declarations && declared.has(typesPackage))) continue;
      undeclared.push({ file: relative(dist, file), specifier, packageName });
    }
  }
  return undeclared;
}
