import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { FileHashes } from "../../scripts/deploy/bundle-cache.ts";
import { buildFunction } from "../../scripts/deploy/lambda-build.ts";

/**
 * scripts/deploy/bundle-cache.ts through buildFunction, on a project of three files: a bundle is
 * served from the cache only while every file esbuild read for it is unchanged, even one whose code
 * the bundle dropped.
 */
let root: string;
let outs = 0;
const write = (file: string, text: string) => writeFileSync(join(root, file), text);
const build = async (
  props = {},
  { handler = "fn.handler", hashes }: { handler?: string; hashes?: FileHashes } = {},
) => {
  const out = join(root, "node_modules", ".out", String(outs++));
  const built = await buildFunction(root, handler, out, { minify: false, ...props }, hashes);
  return { ...built, text: readFileSync(built.file, "utf8") };
};

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "bundle-cache-"));
  mkdirSync(join(root, "node_modules"));
  write(
    "fn.ts",
    'import { word } from "./dep.ts";\nimport "./quiet.ts";\nexport const handler = () => word;\n',
  );
  write("dep.ts", 'export const word = "one";\n');
  // Nothing of it reaches the bundle: esbuild reads it and drops its unused declaration.
  write("quiet.ts", "export const unused = 1;\n");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

it("the same files again: the kept bundle, byte for byte, with the same inputs", async () => {
  const first = await build();
  expect(first.cached).toBe(false);
  expect(first.text).toContain('"one"');
  expect(first.inputs.map((p) => p.slice(root.length + 1)).sort()).toEqual(["dep.ts", "fn.ts"]);
  const again = await build();
  expect(again.cached).toBe(true);
  expect(again.text).toBe(first.text);
  expect(again).toMatchObject({ bytes: first.bytes, inputs: first.inputs });
});

it("an edited input builds again, and so does a file read whose code the bundle had dropped", async () => {
  write("dep.ts", 'export const word = "two";\n');
  const edited = await build();
  expect(edited.cached).toBe(false);
  expect(edited.text).toContain('"two"');

  write("quiet.ts", 'console.log("now it speaks");\n');
  const spoke = await build();
  expect(spoke.cached).toBe(false);
  expect(spoke.text).toContain("now it speaks");
  expect((await build()).cached).toBe(true);
});

it("a project file esbuild reads for resolution (tsconfig.json) builds again", async () => {
  await build();
  write("tsconfig.json", "{}\n");
  expect((await build()).cached).toBe(false);
});

it("a bundle with a source map is never kept: its paths depend on where it is written", async () => {
  expect((await build({ sourcemap: true })).cached).toBe(false);
  expect((await build({ sourcemap: true })).cached).toBe(false);
});

it("one program run's functions share one read of each file: a run after an edit reads it again", async () => {
  write("fn2.ts", 'import { word } from "./dep.ts";\nexport const handler = () => word.toUpperCase();\n');
  const run = (hashes: FileHashes) =>
    Promise.all(["fn.handler", "fn2.handler"].map((handler) => build({}, { handler, hashes })));
  await run(new Map());
  const hashes: FileHashes = new Map();
  const [one, two] = await run(hashes);
  expect([one?.cached, two?.cached]).toEqual([true, true]);
  expect(hashes.has(join(root, "dep.ts"))).toBe(true);
  // The run's memo is what is compared: a hash it holds is not read again (here one that matches
  // nothing, so both build again).
  const [three, four] = await run(new Map([[join(root, "dep.ts"), Promise.resolve("not this file's")]]));
  expect([three?.cached, four?.cached]).toEqual([false, false]);

  write("dep.ts", 'export const word = "three";\n');
  const [edited] = await run(new Map());
  expect(edited?.cached).toBe(false);
  expect(edited?.text).toContain('"three"');
});
