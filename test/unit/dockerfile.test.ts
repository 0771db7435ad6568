import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { copyProblems, dockerignore, replayStage } from "../support/docker-context.ts";
import {
  type Instruction,
  parseCommand,
  parseCopy,
  parseDockerfile,
  parseEnv,
  type Stage,
  stageNamed,
} from "../support/dockerfile.ts";

const dir = mkdtempSync(join(tmpdir(), "dockerfile-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A build context in the scratch dir, made of `files` (path → content). */
function context(name: string, files: Record<string, string>): string {
  const root = join(dir, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}

const instruction = (keyword: string, args: string): Instruction => ({ keyword, args, line: 1 });

describe("parseDockerfile", () => {
  it("joins continuations as BuildKit does: no separator, comment and blank lines inside dropped", () => {
    const [stage] = parseDockerfile(
      [
        "FROM node:24-slim",
        "RUN apt-get update \\",
        "# a comment inside",
        "",
        " && apt-get install -y x",
      ].join("\n"),
    );
    expect(stage?.instructions).toEqual([
      { keyword: "RUN", args: "apt-get update  && apt-get install -y x", line: 2 },
    ]);
  });

  it("reads stages (platform, AS name in any case), keywords in any case, and drops what precedes FROM", () => {
    const stages = parseDockerfile(
      [
        "# syntax=docker/dockerfile:1",
        "ARG BASE=node",
        "from --platform=$BUILDPLATFORM node:24 as Build",
        "workdir /app",
        "FROM node:24-slim",
        "COPY --from=build /app/x ./x",
      ].join("\n"),
    );
    expect(stages.map(({ index, name, image, platform }) => ({ index, name, image, platform }))).toEqual([
      { index: 0, name: "build", image: "node:24", platform: "$BUILDPLATFORM" },
      { index: 1, name: undefined, image: "node:24-slim", platform: undefined },
    ]);
    expect(stages[0]?.instructions).toEqual([{ keyword: "WORKDIR", args: "/app", line: 4 }]);
    expect(stageNamed(stages, "BUILD", 1)?.index).toBe(0);
    expect(stageNamed(stages, "0", 1)?.index).toBe(0);
    // Only an earlier stage can be copied from.
    expect(stageNamed(stages, "build", 0)).toBeUndefined();
  });

  it("honours an escape directive at the top, and only there", () => {
    const [stage] = parseDockerfile(["# escape=`", "FROM x", "RUN a `", "  b"].join("\n"));
    expect(stage?.instructions[0]?.args).toBe("a   b");
    const [late] = parseDockerfile(["FROM x", "# escape=`", "RUN a `", "  b"].join("\n"));
    expect(late?.instructions.map((i) => [i.keyword, i.args])).toEqual([
      ["RUN", "a `"],
      ["B", ""],
    ]);
  });

  it("refuses a FROM it can't read", () => {
    expect(() => parseDockerfile("FROM node:24 AS")).toThrow(/line 1: FROM/);
    expect(() => parseDockerfile("FROM node:24 named x")).toThrow(/expected FROM/);
  });

  it("reads infra/pool.Dockerfile's esbuild step as the exact string /bin/sh -c gets", () => {
    const text = readFileSync(fileURLToPath(new URL("../../infra/pool.Dockerfile", import.meta.url)), "utf8");
    const run = parseDockerfile(text)
      .flatMap((s) => s.instructions)
      .find((i) => i.keyword === "RUN" && i.args.includes("esbuild"));
    const command = run && parseCommand(run);
    expect(command).toBeDefined();
    expect(command && "shell" in command && command.shell).toMatch(
      /^node_modules\/\.bin\/esbuild functions\/pool\/main\.ts +--bundle .*--banner:js="import \{ createRequire \} from 'module'; const require = createRequire\(import\.meta\.url\);" +--outfile=dist\/pool\.mjs$/,
    );
  });
});

describe("parseCopy, parseCommand, parseEnv", () => {
  it("reads COPY flags, several sources, and the JSON form", () => {
    expect(parseCopy(instruction("COPY", "--chown=node:node --link --from=build /a /b ./"))).toEqual({
      from: "build",
      sources: ["/a", "/b"],
      dest: "./",
      line: 1,
    });
    expect(parseCopy(instruction("COPY", '["my file", "dest dir/"]'))).toMatchObject({
      from: undefined,
      sources: ["my file"],
      dest: "dest dir/",
    });
    expect(() => parseCopy(instruction("COPY", "only-one"))).toThrow(/source and a destination/);
  });

  it("tells shell form from exec form, and drops RUN's own flags", () => {
    expect(parseCommand(instruction("CMD", '["node", "dist/pool.mjs"]'))).toEqual({
      argv: ["node", "dist/pool.mjs"],
    });
    expect(parseCommand(instruction("RUN", "--mount=type=cache,target=/root/.npm npm ci"))).toEqual({
      shell: "npm ci",
    });
    // Not valid JSON: shell form, as BuildKit reads it.
    expect(parseCommand(instruction("CMD", "[node dist/pool.mjs]"))).toEqual({
      shell: "[node dist/pool.mjs]",
    });
  });

  it("reads ENV pairs, quoted values, and the legacy form", () => {
    expect(parseEnv(instruction("ENV", "NODE_ENV=production GREETING=\"hello world\" X='a b'"))).toEqual({
      NODE_ENV: "production",
      GREETING: "hello world",
      X: "a b",
    });
    expect(parseEnv(instruction("ENV", "NODE_ENV production mode"))).toEqual({ NODE_ENV: "production mode" });
  });
});

describe("the build context", () => {
  const ctx = context("ctx", {
    ".dockerignore": "**/node_modules\ntest\n*.log\n!keep.log\n",
    "app/a.ts": "a",
    "app/node_modules/x/index.js": "x",
    "test/t.ts": "t",
    "debug.log": "d",
    "keep.log": "k",
    "children/c.py": "c",
  });

  it("applies .dockerignore: a directory's match leaves out all under it, the last match wins", () => {
    const ignored = dockerignore(ctx);
    expect(ignored("app/a.ts")).toBe(false);
    expect(ignored("app/node_modules/x/index.js")).toBe(true);
    expect(ignored("test/t.ts")).toBe(true);
    expect(ignored("debug.log")).toBe(true);
    expect(ignored("keep.log")).toBe(false);
  });

  it("names each COPY whose source is missing, ignored, or written by no RUN of its stage", () => {
    const stages = parseDockerfile(
      [
        "FROM node:24 AS build",
        "WORKDIR /app",
        "COPY app ./app",
        "COPY nowhere ./",
        "COPY test ./test",
        "COPY *.log ./",
        "RUN tool --outfile=dist/out.mjs",
        "FROM node:24-slim",
        "COPY --from=build /app/dist/out.mjs ./",
        "COPY --from=build /app/dist/other.mjs ./",
        "COPY --from=later /x ./",
      ].join("\n"),
    );
    expect(copyProblems(stages, ctx)).toEqual([
      "line 4: COPY nowhere is not in the build context",
      "line 5: COPY test is left out by .dockerignore",
      'line 10: COPY /app/dist/other.mjs: no RUN step of stage "build" writes it',
      "line 11: COPY --from=later names no earlier stage",
    ]);
  });

  it("replays a stage: WORKDIR, COPY of a directory's contents and of files, .dockerignore applied", () => {
    const stages = parseDockerfile(
      [
        "FROM node:24 AS build",
        "WORKDIR /app",
        "COPY app ./app",
        "COPY *.log children/c.py ./extra/",
        "RUN make-it",
        "FROM node:24-slim",
        "WORKDIR /srv",
        "COPY --from=build /app/app/a.ts ./renamed.ts",
        "ENV A=1",
        "USER node",
        'CMD ["node", "x"]',
      ].join("\n"),
    );
    const [stage, runtime] = stages as [Stage, Stage];
    const ran: string[] = [];
    const root = join(dir, "replay-build");
    const build = replayStage(stage, stages, {
      root,
      context: ctx,
      replayed: new Map(),
      run: (i, cwd) => ran.push(`${i.args} in ${cwd}`),
    });
    expect(ran).toEqual([`make-it in ${join(root, "app")}`]);
    expect(readFileSync(join(root, "app/app/a.ts"), "utf8")).toBe("a");
    expect(() => readFileSync(join(root, "app/app/node_modules/x/index.js"))).toThrow(/ENOENT/);
    expect(readFileSync(join(root, "app/extra/keep.log"), "utf8")).toBe("k");
    expect(readFileSync(join(root, "app/extra/c.py"), "utf8")).toBe("c");
    expect(() => readFileSync(join(root, "app/extra/debug.log"))).toThrow(/ENOENT/);

    const out = replayStage(runtime, stages, {
      root: join(dir, "replay-runtime"),
      context: ctx,
      replayed: new Map([["build", build]]),
      run: () => {},
    });
    expect(readFileSync(join(dir, "replay-runtime/srv/renamed.ts"), "utf8")).toBe("a");
    expect(out).toMatchObject({ workdir: "/srv", env: { A: "1" }, user: "node" });
    expect(out.cmd?.args).toBe('["node", "x"]');
  });

  it("refuses to replay an instruction it doesn't know", () => {
    const stages = parseDockerfile("FROM x\nADD https://example.com/f /f");
    expect(() =>
      replayStage(stages[0] as Stage, stages, {
        root: join(dir, "replay-add"),
        context: ctx,
        replayed: new Map(),
        run: () => {},
      }),
    ).toThrow(/line 2: ADD is not replayed here/);
  });
});
