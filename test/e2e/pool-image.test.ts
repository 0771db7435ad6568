import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { POOL_CAPABILITIES } from "../../lib/deploy-plan/pool-capabilities.ts";
import { DEFAULT_CHILD_UIDS } from "../../lib/pool/child-users.ts";
import type { Engine } from "../../lib/services/engine-services.ts";
import { getJob } from "../../lib/store/read-ops.ts";
import { type PoolProcess, startPoolProcess } from "../../local/pool-process.ts";
import { copyProblems, type ReplayedStage, replayStage } from "../support/docker-context.ts";
import { type Instruction, parseCommand, parseDockerfile, type Stage } from "../support/dockerfile.ts";
import { CapturingLog } from "../support/pool-harness.ts";
import { type PoolProcessStage, poolProcessStage } from "../support/pool-process-stage.ts";
import { emulatorsForFile } from "../support/test-emulators.ts";
import { asUnprivileged, pythonForUnprivileged, UNPRIVILEGED, uidOf } from "../support/unprivileged.ts";
import { waitFor } from "../support/wait.ts";

/**
 * infra/pool.Dockerfile, checked without a Docker engine. The Dockerfile itself is the input: its
 * COPY sources are checked against the build context, its stages are replayed into a temp dir (the
 * build stage's esbuild RUN line run as written, with the project's esbuild; the runtime stage's
 * /app laid out by its COPY lines, owned by root and unwritable), and its CMD is run there as the
 * task runs it: root with only the capabilities the task definition leaves (lib/deploy-plan/
 * pool-capabilities.ts) and the task's SKYFORGE_POOL_CHILD_USERS=required, against the emulators:
 * it serves every demo child, each as a user of its own, and drains on SIGTERM. What stays unproven
 * here: the base images, the apt-get step (the host's python3 stands in for it) and the arm64 build.
 */
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DOCKERFILE = join(ROOT, "infra/pool.Dockerfile");
/** The pool's SKYFORGE_POOL_DRAIN_SECONDS: the short job ends inside it, the long one never does. */
const DRAIN_SECONDS = 2;
/**
 * An operator's pool file inside the image (under children/, as infra/pool-config.ts requires), adding
 * the test child that hangs on request: the job that can't finish inside the drain deadline.
 */
const OPERATOR_POOL_FILE = "children/operator-pool.json";
const operatorPoolConfig = JSON.stringify({
  kinds: { scripted: { argv: ["node", "children/scripted.mjs"], soft: 2, hard: 2 } },
});

const stages = parseDockerfile(readFileSync(DOCKERFILE, "utf8"));

/**
 * Runs the rest of an argv as root with only the pool task's capabilities, as ECS starts the
 * container once the task definition has dropped the others; it dies if the test process does.
 */
const AS_POOL_TASK = [
  "setpriv",
  "--inh-caps=-all",
  `--bounding-set=-all,${POOL_CAPABILITIES.map((c) => `+${c.toLowerCase()}`).join(",")}`,
  "--pdeathsig",
  "KILL",
  "--",
];
/** CapEff of a process holding exactly the pool task's capabilities (CHOWN 0, KILL 5, SETGID 6, SETUID 7, SETPCAP 8). */
const POOL_TASK_CAP_EFF = "00000000000001e1";
const capEff = (pid: number) => /^CapEff:\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
const inChildRange = (uid: number) =>
  uid >= DEFAULT_CHILD_UIDS.firstUid && uid < DEFAULT_CHILD_UIDS.firstUid + DEFAULT_CHILD_UIDS.uidCount;

describe("infra/pool.Dockerfile's COPY steps", () => {
  it("find every source: in the build context (not .dockerignored), or written by the stage they name", () => {
    expect(stages.map((s) => s.name)).toEqual(["build", "runtime"]);
    expect(copyProblems(stages, ROOT)).toEqual([]);
  });
});

/** The major Node version the runtime stage's base image (node:24-slim) brings. */
function imageNodeMajor(runtime: Stage): number {
  const m = /^node:(\d+)/.exec(runtime.image);
  if (!m) throw new Error(`the runtime stage's image ${runtime.image} is not a node image`);
  return Number(m[1]);
}

/** Stands in for the Dockerfile's RUN steps, or refuses one it doesn't know. */
function runStep(i: Instruction, cwd: string, nodeDir: string, built: { ms: number }): void {
  const command = parseCommand(i);
  if (!("shell" in command)) throw new Error(`line ${i.line}: an exec-form RUN is not replayed here`);
  if (/^npm ci\s*$/.test(command.shell)) {
    // No registry install here: the project's own node_modules, installed from the same lock file.
    symlinkSync(join(ROOT, "node_modules"), join(cwd, "node_modules"));
  } else if (command.shell.includes("node_modules/.bin/esbuild")) {
    const started = performance.now();
    const run = spawnSync("/bin/sh", ["-c", command.shell], {
      cwd,
      env: { ...process.env, PATH: `${nodeDir}:${process.env.PATH}` },
      encoding: "utf8",
    });
    built.ms = performance.now() - started;
    if (run.status !== 0)
      throw new Error(`line ${i.line}: the esbuild step failed:\n${run.stdout}${run.stderr}`);
  } else if (/\bapt-get\b.*\binstall\b/.test(command.shell)) {
    const packages = (/\binstall\b([^&;]*)/.exec(command.shell)?.[1] ?? "").split(/\s+/);
    const wanted = packages.filter((p) => p !== "" && !p.startsWith("-"));
    // The host's python3 (found for the unprivileged user) stands in for the one apt-get installs.
    const unknown = wanted.filter((p) => p !== "python3");
    if (unknown.length > 0)
      throw new Error(`line ${i.line}: apt-get installs ${unknown.join(", ")}; no stand-in here`);
  } else if (!/^apt-get update\b/.test(command.shell)) {
    throw new Error(
      `line ${i.line}: RUN ${command.shell}: no stand-in for this step; teach the test about it`,
    );
  }
}

/** Every file and directory under `dir`, `dir` included. */
function walk(dir: string): string[] {
  return [dir, ...readdirSync(dir, { recursive: true }).map((p) => join(dir, String(p)))];
}

const sha256Rounds = (text: string, rounds: number) => {
  let digest = Buffer.from(text);
  for (let i = 0; i < rounds; i++) digest = createHash("sha256").update(digest).digest();
  return digest.toString("hex");
};

describe("the pool image, replayed: its CMD as the task runs it, in a read-only /app", () => {
  // Stopped after the pool (the hooks unwind in reverse), so it can hand its jobs back.
  const emulators = emulatorsForFile();
  let dir: string | undefined;
  let pool: PoolProcess | undefined;
  let stage: PoolProcessStage | undefined;
  let engine: Engine;
  let runtime: ReplayedStage;
  let appDir: string;
  let python: { dir: string; version: string };
  let nodeVersion: string;
  const log = new CapturingLog();
  const figures = { bundleBytes: 0, buildMs: 0 };

  /** The pool's own JSON log lines (Powertools), parsed. */
  const poolLog = () =>
    log.entries.flatMap((e) => {
      if (e.message !== "pool") return [];
      try {
        return [JSON.parse(String(e.attributes?.line)) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

  /** Everything the pool process wrote, and what its supervisor said about it. */
  const poolOutput = () =>
    log.entries
      .map((e) =>
        e.message === "pool" ? String(e.attributes?.line) : `${e.message} ${JSON.stringify(e.attributes)}`,
      )
      .join("\n");

  beforeAll(async () => {
    const nodeDir = dirname(process.execPath);
    const node = asUnprivileged([process.execPath, "--version"]);
    if (!node.ok) throw new Error(`uid ${UNPRIVILEGED} can't run ${process.execPath}: ${node.out}`);
    nodeVersion = node.out;
    python = pythonForUnprivileged();

    dir = mkdtempSync(join(tmpdir(), "skyforge-pool-image-"));
    chmodSync(dir, 0o755); // mkdtemp makes it 0700: the unprivileged user must reach /app below it
    const replayed = new Map<string, ReplayedStage>();
    const built = { ms: 0 };
    for (const stage of stages) {
      const out = replayStage(stage, stages, {
        root: join(dir, stage.name ?? String(stage.index)),
        context: ROOT,
        replayed,
        run: (i, cwd) => runStep(i, cwd, nodeDir, built),
      });
      replayed.set(stage.name ?? String(stage.index), out);
    }
    figures.buildMs = Math.round(built.ms);
    const last = stages.at(-1) as Stage;
    if (imageNodeMajor(last) !== Number(/^v(\d+)/.exec(nodeVersion)?.[1]))
      throw new Error(`the image runs Node ${imageNodeMajor(last)}; this test has ${nodeVersion}`);
    runtime = replayed.get(last.name ?? String(last.index)) as ReplayedStage;
    appDir = join(runtime.root, runtime.workdir);
    figures.bundleBytes = statSync(join(appDir, "dist/pool.mjs")).size;
    copyFileSync(join(ROOT, "test/fixtures/children/scripted.mjs"), join(appDir, "children/scripted.mjs"));
    writeFileSync(join(appDir, OPERATOR_POOL_FILE), operatorPoolConfig);
    // The image's /app: owned by root (COPY without --chown) and writable by no one.
    const chmod = spawnSync("chmod", ["-R", "a-w", runtime.root]);
    if (chmod.status !== 0) throw new Error(`chmod -R a-w failed: ${chmod.stderr}`);

    stage = await poolProcessStage(emulators(), "pool-image", operatorPoolConfig);
    engine = stage.engine;

    const cmd = parseCommand(runtime.cmd as Instruction);
    const argv = "argv" in cmd ? cmd.argv : ["/bin/sh", "-c", cmd.shell];
    pool = startPoolProcess({
      // env -C: the container's WORKDIR, where the pool resolves its children's paths.
      command: [...AS_POOL_TASK, "env", "-C", appDir, ...argv],
      // The container's environment, not the test's: the project's Node 24 and a python3 first on
      // PATH, then the system's (setpriv for the children), no HOME, the stage's ENV, and what the
      // task definition sets (infra/pool.ts) that matters here.
      baseEnv: {
        PATH: `${nodeDir}:${python.dir}:/usr/bin:/bin`,
        HOME: "/nonexistent",
        ...runtime.env,
        SKYFORGE_POOL_CONFIG: OPERATOR_POOL_FILE,
        SKYFORGE_POOL_CHILD_USERS: "required",
      },
      ...stage.target,
      drainSeconds: DRAIN_SECONDS,
      waitSeconds: 1,
      log,
    });
    // Started, or died (the supervisor then logs "pool process died"): either way, no waiting on.
    const started = () => poolLog().some((l) => l.message === "pool started");
    await waitFor(
      async () => started() || log.matching(/pool process/).length > 0,
      "the pool to start",
      30_000,
    );
    if (!started()) throw new Error(`the pool did not start; its output:\n${poolOutput().slice(0, 4000)}`);
  }, 60_000);

  afterAll(async () => {
    try {
      await pool?.stop();
      stage?.destroy();
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });

  it("starts from the bundle as root with only the task's capabilities, in an unwritable /app, serving every kind (none refused)", async ({
    annotate,
  }) => {
    // Root, so that it may start each child as a user of its own; the task definition drops the rest.
    expect(runtime.user).toBe("root");
    const started = poolLog().find((l) => l.message === "pool started");
    expect(started, poolOutput()).toBeDefined();
    expect(started?.refused).toEqual([]);
    // The demo kinds, and the one the operator's file adds.
    expect(started?.kinds).toHaveLength(app.poolKinds.length + 1);

    const pid = pool?.pid as number;
    expect(uidOf(pid)).toBe(0);
    expect(capEff(pid)).toBe(POOL_TASK_CAP_EFF);
    expect(readlinkSync(`/proc/${pid}/cwd`)).toBe(appDir);
    for (const path of walk(appDir)) {
      expect(statSync(path).uid, path).toBe(0);
      expect(asUnprivileged(["test", "-w", path]).ok, `${path} is writable`).toBe(false);
    }
    await annotate(
      `bundle dist/pool.mjs ${(figures.bundleBytes / 1024 / 1024).toFixed(2)} MiB, built in ${figures.buildMs} ms; ` +
        `node ${nodeVersion}, python ${python.version} from ${python.dir}`,
    );
  });

  it("serves one job per demo child, each child run as a user of its own, without capabilities, in /app", async () => {
    const runtimes: Record<string, string> = {
      node: `node ${nodeVersion}`,
      python3: `python ${python.version}`,
    };
    const uids = new Set<number>();
    const jobs = await Promise.all(
      app.poolKinds.map(async (kind) => {
        const text = `image ${kind.name}`;
        const { job } = await engine.producer.enqueue({
          kind: kind.name,
          payload: { text, rounds: 1000, key: "image" },
        });
        return { kind, text, id: job.id };
      }),
    );
    for (const { kind, text, id } of jobs) {
      const done = await waitFor(
        async () => {
          const item = await getJob(engine.store, id);
          // A failed attempt is an answer too: it shows its lastError at once, not after the wait.
          return item?.status === "done" || item?.status === "dead" || item?.lastError ? item : undefined;
        },
        `the ${kind.name} job to finish`,
        20_000,
      );
      expect(done, done.lastError).toMatchObject({ status: "done", attempts: 1 });
      const result = JSON.parse(done.result ?? "{}") as { sha256: string; pid: number; runtime: string };
      expect(result.sha256).toBe(sha256Rounds(text, 1000));
      expect(result.runtime).toBe(runtimes[kind.argv[0] as string]);
      // The child stays warm after its job: it is still there to look at.
      const uid = uidOf(result.pid);
      expect(inChildRange(uid), `uid ${uid}`).toBe(true);
      uids.add(uid);
      expect(capEff(result.pid)).toBe("0000000000000000");
      expect(readlinkSync(`/proc/${result.pid}/cwd`)).toBe(appDir);
    }
    // A user per child: no two children share one.
    expect(uids.size).toBe(jobs.length);
  }, 45_000);

  it("drains on SIGTERM: the job that fits the deadline finishes, the other is handed back, exit 0", async ({
    annotate,
  }) => {
    // Never answers: still running at the deadline, however fast the machine.
    const long = { kind: "scripted", payload: { act: "hang" } };
    // Answers once its marker exists, which the test writes as the stop begins: running at SIGTERM,
    // and done within milliseconds of it, however loaded the machine (not a CPU-bound job that
    // might outlast the deadline).
    const markerDir = mkdtempSync(join(tmpdir(), "skyforge-drain-"));
    chmodSync(markerDir, 0o755);
    const marker = join(markerDir, "finish");
    const short = { kind: "scripted", payload: { act: "wait-marker", marker } };
    const longId = (await engine.producer.enqueue(long)).job.id;
    const shortId = (await engine.producer.enqueue(short)).job.id;
    const status = async (id: string) => (await getJob(engine.store, id))?.status;
    await waitFor(async () => (await status(longId)) === "running", "the long job to run", 20_000, 10);
    await waitFor(async () => (await status(shortId)) === "running", "the short job to run", 20_000, 10);

    const stopped = (pool as PoolProcess).stop();
    // The marker once the pool has taken the signal: the short job is running when the drain begins.
    await waitFor(
      async () => poolLog().some((l) => l.message === "draining"),
      "the pool to drain",
      20_000,
      10,
    );
    writeFileSync(marker, "");
    const code = await stopped;
    rmSync(markerDir, { recursive: true, force: true });
    expect(code).toBe(0);
    expect(pool?.restarts).toBe(0);
    const finished = await getJob(engine.store, shortId);
    expect(finished).toMatchObject({ status: "done", attempts: 1 });
    const handedBack = await getJob(engine.store, longId);
    expect(handedBack).toMatchObject({ status: "queued", attempts: 0 });
    expect(handedBack?.leaseToken).toBeUndefined();
    // Visible again at once, for the next task.
    const again = await engine.transport.receive("heavy", 10, 0);
    expect(again.map((m) => JSON.parse(m.Body ?? "{}").id)).toEqual([longId]);
    const report = poolLog().find((l) => l.message === "pool stopped");
    expect(report).toMatchObject({ handedBack: 1 });
    await annotate(`drained: ${report?.finished} finished, ${report?.handedBack} handed back`);
  }, 30_000);
});
