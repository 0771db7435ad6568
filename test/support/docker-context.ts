import { cpSync, existsSync, globSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { basename, join, matchesGlob, posix, relative } from "node:path";
import { type Instruction, parseCopy, parseEnv, type Stage, stageNamed } from "./dockerfile.ts";

/**
 * A Docker build replayed on this machine, for a host with no Docker engine: what the build context
 * holds (the .dockerignore applied), whether each COPY finds its sources, and a stage's filesystem
 * laid out under a host directory by replaying its WORKDIR and COPY steps. RUN steps are the
 * caller's (a callback), since only it knows which it can stand in for.
 */

/**
 * Whether the build context leaves `rel` (a path relative to the context root) out, by the
 * .dockerignore at the context root: Docker's rules, where the last matching pattern wins, a `!`
 * pattern brings a path back, and a pattern that matches a directory leaves out all under it.
 */
export function dockerignore(context: string): (rel: string) => boolean {
  const file = join(context, ".dockerignore");
  const rules = (existsSync(file) ? readFileSync(file, "utf8") : "")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const keep = l.startsWith("!");
      const pattern = posix.normalize((keep ? l.slice(1) : l).trim()).replace(/^\/+/, "");
      return { keep, pattern };
    });
  return (rel) => {
    const parts = posix.normalize(rel).split("/");
    let ignored = false;
    for (const { keep, pattern } of rules) {
      for (let n = 1; n <= parts.length; n++) {
        if (matchesGlob(parts.slice(0, n).join("/"), pattern)) {
          ignored = !keep;
          break;
        }
      }
    }
    return ignored;
  };
}

/** A COPY source in the context: the paths it names (a glob may name several), or why it names none. */
function contextPaths(context: string, source: string, ignored: (rel: string) => boolean) {
  const rel = posix.normalize(source).replace(/^\/+/, "");
  if (rel.startsWith("..")) return { problem: `${source} is outside the build context` };
  const named = /[*?[]/.test(rel)
    ? globSync(rel, { cwd: context })
    : existsSync(join(context, rel))
      ? [rel]
      : [];
  if (named.length === 0) return { problem: `${source} is not in the build context` };
  const sent = named.filter((p) => p === "." || !ignored(p));
  if (sent.length === 0) return { problem: `${source} is left out by .dockerignore` };
  return { paths: sent };
}

/** The container path `path` means in a stage whose working directory is `workdir`. */
const inContainer = (workdir: string, path: string) => posix.resolve(workdir, path);

/** Each stage's WORKDIR just before each of its instructions. */
function workdirs(stage: Stage): string[] {
  let workdir = "/";
  return stage.instructions.map((i) => {
    const before = workdir;
    if (i.keyword === "WORKDIR") workdir = inContainer(workdir, i.args);
    return before;
  });
}

/**
 * What is wrong with the Dockerfile's COPY steps, one sentence each (none: every source exists). A
 * context source must exist and not be left out by .dockerignore. A `--from=` source must come from
 * an earlier stage and be written by one of its RUN steps: one that names the path, as its stage's
 * working directory resolves it (esbuild's `--outfile=dist/pool.mjs` under WORKDIR /app names
 * /app/dist/pool.mjs). Running the step (replayStage) then proves it really writes it.
 */
export function copyProblems(stages: readonly Stage[], context: string): string[] {
  const ignored = dockerignore(context);
  const problems: string[] = [];
  for (const stage of stages) {
    for (const i of stage.instructions.filter((x) => x.keyword === "COPY")) {
      const copy = parseCopy(i);
      const at = `line ${copy.line}: COPY`;
      if (copy.from === undefined) {
        for (const s of copy.sources) {
          const found = contextPaths(context, s, ignored);
          if (found.problem) problems.push(`${at} ${found.problem}`);
        }
        continue;
      }
      const source = stageNamed(stages, copy.from, stage.index);
      if (!source) {
        problems.push(`${at} --from=${copy.from} names no earlier stage`);
        continue;
      }
      for (const s of copy.sources) {
        const path = posix.resolve("/", s);
        const dirs = workdirs(source);
        const written = source.instructions.some(
          (r, n) => r.keyword === "RUN" && namesPath(r.args, path, dirs[n] as string),
        );
        if (!written) problems.push(`${at} ${s}: no RUN step of stage "${copy.from}" writes it`);
      }
    }
  }
  return problems;
}

/** Whether a command names `path`, absolute or relative to `workdir`, as a word or a flag's value. */
function namesPath(command: string, path: string, workdir: string): boolean {
  const words = command.split(/[\s='"]+/);
  return words.some((w) => w !== "" && inContainer(workdir, w) === path);
}

export interface ReplayedStage {
  /** The host directory that stands for the stage's `/`. */
  root: string;
  /** Its WORKDIR at the end (a container path). */
  workdir: string;
  env: Record<string, string>;
  user: string | undefined;
  cmd: Instruction | undefined;
}

export interface ReplayOptions {
  /** The host directory that stands for the stage's `/` (created). */
  root: string;
  context: string;
  /** Earlier stages already replayed, by name, for `COPY --from=`. */
  replayed: ReadonlyMap<string, ReplayedStage>;
  /** Stands in for a RUN step in `cwd` (the host path of the WORKDIR), or throws if it can't. */
  run(instruction: Instruction, cwd: string): void;
}

/**
 * Lays out one stage under `root` as Docker would build it: WORKDIR creates its directory, COPY
 * copies (a directory's contents, a file to a path or into a `…/` directory, .dockerignore applied
 * to context sources), RUN goes to `run`, ENV, USER and CMD are kept. Any other instruction throws,
 * so a new kind of step makes the replay fail rather than skip it.
 */
export function replayStage(stage: Stage, stages: readonly Stage[], o: ReplayOptions): ReplayedStage {
  const ignored = dockerignore(o.context);
  const host = (path: string) => join(o.root, path);
  const out: ReplayedStage = { root: o.root, workdir: "/", env: {}, user: undefined, cmd: undefined };
  mkdirSync(o.root, { recursive: true });
  for (const i of stage.instructions) {
    switch (i.keyword) {
      case "WORKDIR":
        out.workdir = inContainer(out.workdir, i.args);
        mkdirSync(host(out.workdir), { recursive: true });
        break;
      case "COPY":
        copyInto(i, out.workdir, host, o, stages, stage, ignored);
        break;
      case "RUN":
        mkdirSync(host(out.workdir), { recursive: true });
        o.run(i, host(out.workdir));
        break;
      case "ENV":
        Object.assign(out.env, parseEnv(i));
        break;
      case "USER":
        out.user = i.args;
        break;
      case "CMD":
        out.cmd = i;
        break;
      case "STOPSIGNAL":
      case "LABEL":
      case "EXPOSE":
        break;
      default:
        throw new Error(`line ${i.line}: ${i.keyword} is not replayed here; teach replayStage about it`);
    }
  }
  return out;
}

function copyInto(
  i: Instruction,
  workdir: string,
  host: (path: string) => string,
  o: ReplayOptions,
  stages: readonly Stage[],
  stage: Stage,
  ignored: (rel: string) => boolean,
): void {
  const copy = parseCopy(i);
  const dest = inContainer(workdir, copy.dest);
  const intoDir = copy.dest.endsWith("/") || copy.sources.length > 1;
  if (copy.sources.length > 1 && !copy.dest.endsWith("/"))
    throw new Error(`line ${i.line}: COPY with several sources needs a destination ending in /`);
  const files: { from: string; filter?: (src: string) => boolean }[] = [];
  if (copy.from === undefined) {
    for (const s of copy.sources) {
      const found = contextPaths(o.context, s, ignored);
      if (found.problem) throw new Error(`line ${i.line}: COPY ${found.problem}`);
      for (const p of found.paths ?? [])
        files.push({ from: join(o.context, p), filter: (src) => !ignored(relative(o.context, src)) });
    }
  } else {
    const name = stageNamed(stages, copy.from, stage.index)?.name ?? copy.from;
    const source = o.replayed.get(name);
    if (!source) throw new Error(`line ${i.line}: COPY --from=${copy.from}: that stage was not replayed`);
    for (const s of copy.sources) {
      const from = join(source.root, posix.resolve("/", s));
      if (!existsSync(from))
        throw new Error(`line ${i.line}: COPY --from=${copy.from} ${s}: the stage did not make it`);
      files.push({ from });
    }
  }
  for (const f of files) {
    const isDir = statSync(f.from).isDirectory();
    const target = isDir || !intoDir ? host(dest) : join(host(dest), basename(f.from));
    cpSync(f.from, target, { recursive: true, ...(f.filter ? { filter: f.filter } : {}) });
  }
}
