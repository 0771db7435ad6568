import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { isUpToDate, writeStamp } from "../../scripts/build-stamp.ts";

/** scripts/build-stamp.ts: a package build is skipped only when its inputs and its output are exactly as stamped. */
let dir: string;
let input: string;
let out: string;
let stamp: string;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "build-stamp-"));
  input = join(dir, "src.ts");
  out = join(dir, "dist");
  stamp = join(dir, "cache", "pkg.json");
  writeFileSync(input, "export const a = 1;\n");
  mkdirSync(join(out, "types"), { recursive: true });
  writeFileSync(join(out, "index.js"), "export const a = 1;\n");
  writeFileSync(join(out, "types", "src.d.ts"), "export declare const a = 1;\n");
  await writeStamp(stamp, [input, input], out);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

it("a build is up to date while its inputs and its output are as it left them", async () => {
  expect(await isUpToDate(stamp, out)).toBe(true);
});

it("an edited input builds again; the same content back (a revert, a fresh checkout) does not", async () => {
  writeFileSync(input, "export const a = 2;\n");
  expect(await isUpToDate(stamp, out)).toBe(false);
  writeFileSync(input, "export const a = 1;\n");
  expect(await isUpToDate(stamp, out)).toBe(true);
});

it("a removed input, or an output edited, removed or added to, builds again", async () => {
  rmSync(input);
  expect(await isUpToDate(stamp, out)).toBe(false);
  writeFileSync(input, "export const a = 1;\n");

  writeFileSync(join(out, "index.js"), "tampered\n");
  expect(await isUpToDate(stamp, out)).toBe(false);
  writeFileSync(join(out, "index.js"), "export const a = 1;\n");
  expect(await isUpToDate(stamp, out)).toBe(true);

  writeFileSync(join(out, "types", "extra.d.ts"), "export {};\n");
  expect(await isUpToDate(stamp, out)).toBe(false);
  rmSync(join(out, "types", "extra.d.ts"));

  rmSync(join(out, "types", "src.d.ts"));
  expect(await isUpToDate(stamp, out)).toBe(false);
});

it("no stamp, an unreadable one, or one of another format: not up to date", async () => {
  expect(await isUpToDate(join(dir, "cache", "none.json"), out)).toBe(false);
  writeFileSync(stamp, "{not json");
  expect(await isUpToDate(stamp, out)).toBe(false);
  writeFileSync(stamp, JSON.stringify({ format: 0, inputs: {}, outputs: {} }));
  expect(await isUpToDate(stamp, out)).toBe(false);
});

it("an input that can't be read when the build ends leaves no stamp", async () => {
  rmSync(stamp);
  await writeStamp(stamp, [input, join(dir, "gone.ts")], out);
  expect(await isUpToDate(stamp, out)).toBe(false);
});
