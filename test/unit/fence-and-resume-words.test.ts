import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * One word, one meaning (issue 39) for two words durable jobs lean on. "The fence" is the lease
 * token a claim hands out, which is all every write after the claim compares (lib/store/conditions.ts
 * `leaseHeldBy`; test/integration/fence.test.ts shows the attempt can't tell two runs apart), and
 * each text that defines it says so. "Resume" names two operations, each a function of its own: an
 * operator's resume of a paused job (§21) and a waiting job's resume by its token, event or sleep (§22).
 */
const root = new URL("../../", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
const filesUnder = (dir: string, ext: string) =>
  readdirSync(new URL(dir, root), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(ext))
    .map((f) => `${dir}/${f}`);

const texts = [...filesUnder("docs", ".md"), "README.md", ...filesUnder("lib", ".ts")];

describe("the fence", () => {
  it("is defined once, in docs/architecture.md's conventions, as the lease token", () => {
    const conventions = read("docs/architecture.md").split("\n## ")[0] ?? "";
    expect(conventions).toMatch(/"The fence" is the lease token/);
  });

  it("no text makes it a pair with the attempt", () => {
    const pair =
      /pair \(attempt, lease token\)|pair is the fence|\(job\.?\s?id, attempt, fence\)|attempt \+ token/i;
    expect(texts.filter((path) => pair.test(read(path)))).toEqual([]);
  });

  it("ctx.fence's doc comment names the lease token, and no attempt", () => {
    const kind = read("lib/job/kind.ts");
    const comment = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*fence\?: string;/.exec(kind)?.[1] ?? "";
    expect(comment).toMatch(/lease token/);
    expect(comment).not.toMatch(/attempt/);
  });
});

describe("resume", () => {
  it("a paused job's resume and a waiting job's each have a name of their own, declared once", () => {
    const declared = (name: string) =>
      texts.filter(
        (path) => path.endsWith(".ts") && new RegExp(`export (async )?function ${name}\\(`).test(read(path)),
      );
    expect(declared("resumeJob")).toEqual([]);
    expect(declared("resumePausedJob")).toEqual(["lib/producer/resume-paused.ts"]);
    expect(declared("resumeWaitingJob")).toEqual(["lib/durable/resume-waiting.ts"]);
  });
});
