import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { type OutsideProject, projectEnv, repoFolders, runInstalling } from "../support/outside-project.ts";
import { withPackagesDistLock } from "../support/packages-dist-lock.ts";
import { projectRoot } from "../support/project-copy.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * docs/guide/your-project.md, block by block as written: issue 38's whole walk, as a team adopting
 * skyforge takes it, in a new folder outside the repo
 * holding only `npm init`, the same `sst` and the packed tarball (installed from the npm cache
 * first): two kinds of the user's own (one plain, one durable with a step and a 2 s sleep) and an
 * sst.config.ts with the component; `npx skyforge dev` serves them; a plain Node script enqueues
 * both through `skyforge/client` and curl enqueues one; all end done; an edit to the plain kind's
 * handler changes the next job's result without a restart; `npx skyforge durable fixture` records a
 * settle job's journal in the project and the durable kind's steps are then reordered;
 * `npx skyforge check-deploy` passes and lists the user's queue and its worker, whose bundle holds
 * the user's handler, and warns of the reordered step against the recorded fixture.
 */
const execFileAsync = promisify(execFile);
const GUIDE = "docs/guide/your-project.md";
const blocks = docBlocks(GUIDE).filter((b) =>
  b.marker?.startsWith("checked by test/e2e/library-project.test.ts"),
);
const [installBlock, devBlock, enqueueBlock, checkDeployBlock] = blocks
  .filter((b) => b.lang === "bash")
  .map((b) => b.text);
const [appBlock, sstConfigBlock] = blocks.filter((b) => b.lang === "ts").map((b) => b.text);
const producerBlock = blocks.find((b) => b.lang === "js")?.text ?? "";
/** The guide's local address, which the test's stack (on a free port) stands in for. */
const GUIDE_URL = "http://127.0.0.1:3000";

let where: OutsideProject;
let project: string;
let env: NodeJS.ProcessEnv;
let dev: ChildProcess | undefined;
let devOut = "";
const devWaiters = new Set<() => void>();

/** Resolves with the first match of `pattern` in dev's output after `from`, within `boundMs`. */
function devOutput(pattern: RegExp, from = 0, boundMs = 60_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(devOut.slice(from));
      if (!match) return;
      devWaiters.delete(check);
      clearTimeout(timer);
      resolve(match);
    };
    const timer = setTimeout(() => {
      devWaiters.delete(check);
      reject(new Error(`no ${pattern} from skyforge dev within ${boundMs} ms:\n${devOut}`));
    }, boundMs);
    devWaiters.add(check);
    check();
  });
}

beforeAll(async () => {
  // An empty folder outside the repo: the guide's first block makes the project in it.
  const parent = mkdtempSync(join(tmpdir(), "skyforge-outside-"));
  where = { parent, project: join(parent, "my-service") };
  project = where.project;
  // The Node running the tests (24) first, then the PATH without the repo's bins.
  const outside = (process.env.PATH ?? "")
    .split(":")
    .filter((dir) => !repoFolders.some((r) => `${dir}/`.startsWith(r)));
  env = projectEnv({
    PATH: [dirname(process.execPath), ...outside].join(":"),
    npm_config_prefer_offline: "true",
    SST_TELEMETRY_DISABLED: "1",
    SST_SKIP_DEPENDENCY_CHECK: "1",
    SST_NO_BUN: "1",
  });
  // It builds every package and packs packages/skyforge: no other file's build may empty a dist/ meanwhile.
  await withPackagesDistLock(() =>
    runInstalling(
      "bash",
      ["-euo", "pipefail", "-c", (installBlock ?? "").replaceAll("../my-service", project)],
      {
        cwd: projectRoot,
        env,
        timeout: 300_000,
      },
    ),
  );
  mkdirSync(join(project, "src/jobs"), { recursive: true });
  writeFileSync(join(project, "src/jobs/app.ts"), appBlock ?? "");
  writeFileSync(join(project, "sst.config.ts"), sstConfigBlock ?? "");
  writeFileSync(join(project, "producer.mjs"), producerBlock);

  dev = spawn("bash", ["-c", devBlock ?? ""], {
    cwd: project,
    env: { ...env, PORT: "0", SKYFORGE_DATA_DIR: join(where.parent, "data") },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  for (const stream of [dev.stdout, dev.stderr]) {
    stream?.on("data", (chunk) => {
      devOut += chunk;
      for (const check of [...devWaiters]) check();
    });
  }
}, 360_000);

afterAll(async () => {
  if (dev?.pid && dev.exitCode === null && dev.signalCode === null) {
    const exited = new Promise((resolve) => dev?.once("exit", resolve));
    const group = -dev.pid;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(group, name);
      } catch {
        // the group is gone already
      }
    };
    signal("SIGINT");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 15_000))]);
  }
  // Whatever of the group outlived its leader (the stack, its pool) must not write into the folder being removed.
  if (dev?.pid) {
    try {
      process.kill(-dev.pid, "SIGKILL");
    } catch {
      // the group is gone
    }
  }
  // The project holds a whole npm install (sst with its platform): on a loaded machine removing it
  // takes tens of seconds, hence the hook's bound.
  if (where) await rm(where.parent, { recursive: true, force: true, maxRetries: 5 });
}, 120_000);

describe("skyforge as a library, in a project outside the repo", { timeout: 120_000 }, () => {
  let url = "";
  const { call, untilStatus } = stackHttp(() => url);

  it("the guide's blocks are found; its SST is this repo's", () => {
    expect(blocks.map((b) => b.lang)).toEqual(["bash", "ts", "ts", "bash", "js", "bash", "bash"]);
    const sst = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")).devDependencies.sst;
    expect(installBlock).toContain(`sst@${sst}`);
    expect(devBlock).toBe("npx skyforge dev\n");
    const manifest = JSON.parse(readFileSync(join(project, "package.json"), "utf8"));
    expect(manifest.type).toBe("module");
    expect(Object.keys(manifest.dependencies).sort()).toEqual(["skyforge", "sst"]);
  });

  it("npx skyforge dev finds the app from sst.config.ts and serves the user's kinds", async () => {
    url = (await devOutput(/HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/))[1] as string;
    expect(devOut).toContain("src/jobs/app.ts");
    expect(devOut).not.toMatch(/Error:/);
  });

  it("the guide's producer enqueues both kinds through skyforge/client and curl one: each ends done as the guide says", async () => {
    const { stdout } = await execFileAsync(
      "bash",
      ["-euo", "pipefail", "-c", (enqueueBlock ?? "").replaceAll(GUIDE_URL, url)],
      {
        cwd: project,
        env,
        timeout: 60_000,
      },
    );
    const [producerLine = "", curlLine = ""] = stdout.trim().split("\n");
    const promised = /^# (\{.*\})$/m.exec(enqueueBlock ?? "")?.[1] ?? "";
    expect(JSON.parse(producerLine)).toEqual(JSON.parse(promised));
    const { id } = JSON.parse(curlLine) as { id: string };
    expect((await untilStatus(id, "done")).result).toEqual({ greeting: "hello curl" });
  });

  it("an edit to the plain kind's handler changes the next job's result, without a restart", async () => {
    const from = devOut.length;
    const file = join(project, "src/jobs/app.ts");
    writeFileSync(file, readFileSync(file, "utf8").replace('"hello " + name', '"welcome back, " + name'));
    await devOutput(/^reloaded src\/jobs\/app\.ts: kinds greet, settle$/m, from);
    const { body } = await call("POST", "/jobs", { kind: "greet", payload: { name: "Ada" } });
    expect((await untilStatus(body.id, "done")).result).toEqual({ greeting: "welcome back, Ada" });
  });

  it("npx skyforge durable fixture records a settle job's journal in the project; its kind's steps are then reordered", async () => {
    const { body } = await call("POST", "/jobs", { kind: "settle", payload: { order: "o-fixture" } });
    await untilStatus(body.id, "done");
    const { stdout } = await execFileAsync("npx", ["skyforge", "durable", "fixture", body.id], {
      cwd: project,
      env: { ...env, SKYFORGE_ENDPOINT: url },
      timeout: 60_000,
    });
    const file = join(project, "durable-fixtures", "settle", `${body.id}.json`);
    expect(stdout).toContain(`wrote ${file}`);
    const fixture = JSON.parse(readFileSync(file, "utf8"));
    expect(fixture.ops.map((o: { name: string; place: number }) => [o.name, o.place])).toEqual([
      ["price", 1],
      ["cool-off", 2],
      ["settle", 3],
    ]);
    const app = join(project, "src/jobs/app.ts");
    const from =
      '    await ctx.sleep("cool-off", 2);\n    return { order, total, settled: await ctx.step("settle", async () => true) };';
    const source = readFileSync(app, "utf8");
    expect(source).toContain(from);
    writeFileSync(
      app,
      source.replace(
        from,
        '    const settled = await ctx.step("settle", async () => true);\n    await ctx.sleep("cool-off", 2);\n    return { order, total, settled };',
      ),
    );
  });

  it("npx skyforge check-deploy passes, listing the user's queue and its worker, whose bundle holds the user's handler", async () => {
    const { stdout } = await runInstalling("bash", ["-euo", "pipefail", "-c", checkDeployBlock ?? ""], {
      cwd: project,
      env,
      timeout: 400_000,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`);
    });
    expect(stdout).toMatch(/aws:sqs\/queue:Queue JobsOrdersQueueQueue/);
    expect(stdout).toMatch(/aws:sqs\/queue:Queue JobsOrdersDlqQueue/);
    // One worker for the one Lambda-tier queue (the queue's subscriber), built from the user's app:
    // check-deploy fails a bundle that doesn't hold its component's app module.
    const workers =
      stdout.match(/aws:lambda\/function:Function JobsOrdersQueueSubscriber\w+Function$/gm) ?? [];
    expect(workers).toHaveLength(1);
    expect(stdout).toMatch(
      /^ci: \d+ resources, 1 Skyforge component\(s\) \(Jobs\); built .*\bworker \d+ KiB/m,
    );
    expect(stdout).toMatch(/check-deploy: every stage is as declared/);
    expect(stdout).not.toMatch(/FAIL/);
    // The recorded fixture, replayed against the reordered handler: a warning, not a failure.
    expect(stdout).toMatch(/^durable fixtures: 1 replayed, 1 warning\(s\)$/m);
    expect(stdout).toMatch(
      /^ {2}WARNING durable-fixtures\/settle\/\w+\.json: kind settle: step "settle" was recorded at place 3 of the handler's calls, and is now met at place 2; .*NonDeterminismError/m,
    );
  }, 420_000);
});
