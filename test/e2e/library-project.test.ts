import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildPackage } from "../../scripts/build-packages.ts";
import {
  type OutsideProject,
  outsideProjectDir,
  projectEnv,
  repoFolders,
} from "../support/outside-project.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * Issue 38's whole walk, as a team adopting skyforge takes it, in a new folder outside the repo
 * holding only `npm init`, the same `sst` and the packed tarball (installed from the npm cache
 * first): two kinds of the user's own (one plain, one durable with a step and a 2 s sleep) and an
 * sst.config.ts with the component; `npx skyforge dev` serves them; a plain Node script enqueues
 * both through `skyforge/client` and curl enqueues one; all end done; an edit to the plain kind's
 * handler changes the next job's result without a restart; `npx skyforge check-deploy` passes and
 * lists the user's queue and its worker, whose bundle holds the user's handler.
 */
const execFileAsync = promisify(execFile);

const APP = `import * as z from "zod";
import { defineApp, defineKind, defineQueues } from "skyforge";

export const queues = defineQueues([
  {
    name: "orders",
    batchSize: 5,
    batchWindowSeconds: 0,
    maxConcurrency: 4,
    recordConcurrency: 5,
    workerTimeoutSeconds: 30,
    leaseSeconds: 15,
    backoff: { baseSeconds: 1, maxSeconds: 30 },
    retentionDays: { done: 7, dead: 30 },
    maxReceiveCount: 20,
  },
]);

export const greet = defineKind({
  name: "greet",
  payload: z.object({ name: z.string() }),
  queue: "orders",
  maxAttempts: 3,
  timeoutSeconds: 20,
  handler: async ({ name }) => ({ greeting: "hello " + name }),
});

export const settle = defineKind({
  name: "settle",
  payload: z.object({ order: z.string() }),
  queue: "orders",
  maxAttempts: 3,
  timeoutSeconds: 20,
  handler: async ({ order }, ctx) => {
    const total = await ctx.step("price", async () => order.length * 10);
    await ctx.sleep("cool-off", 2);
    return { order, total, settled: await ctx.step("settle", async () => true) };
  },
});

export default defineApp({ queues, kinds: [greet, settle], poolKinds: [], schedules: [], rateLimits: [] });
`;

const SST_CONFIG = `/// <reference path="./.sst/platform/config.d.ts" />
export default $config({
  app(input) {
    return { name: "my-service", home: "aws", removal: input?.stage === "production" ? "retain" : "remove" };
  },
  async run() {
    const { Skyforge } = await import("skyforge/sst");
    const jobs = new Skyforge("Jobs", { app: "src/jobs/app.ts" });
    return jobs.outputs;
  },
});
`;

/** A plain Node script, as a producer would be: both kinds through skyforge/client, each awaited done. */
const PRODUCER = `import { createClient } from "skyforge/client";

const jobs = createClient();
const done = async (id) => {
  for (;;) {
    const seen = await jobs.get(id);
    if (seen.status !== "queued" && seen.status !== "running" && seen.status !== "scheduled") return seen;
    await new Promise((wake) => setTimeout(wake, 100));
  }
};
const greeted = await jobs.enqueue("greet", { name: "Ada" });
const settled = await jobs.enqueue("settle", { order: "o-42" });
const [a, b] = await Promise.all([done(greeted.job.id), done(settled.job.id)]);
console.log(JSON.stringify({ greet: [a.status, a.result], settle: [b.status, b.result] }));
`;

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
  where = outsideProjectDir("my-service");
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
  const sstVersion = JSON.parse(readFileSync(join(projectRoot, "package.json"), "utf8")).devDependencies.sst;
  await execFileAsync("npm", ["init", "-y"], { cwd: project, env });
  await execFileAsync("npm", ["pkg", "set", "type=module"], { cwd: project, env });
  await buildPackage("skyforge");
  await execFileAsync(
    "npm",
    ["pack", join(projectRoot, "packages/skyforge"), "--pack-destination", project],
    {
      cwd: projectRoot,
      env,
    },
  );
  await execFileAsync("npm", ["install", "./skyforge-0.1.0.tgz", `sst@${sstVersion}`], {
    cwd: project,
    env,
    timeout: 240_000,
  });
  mkdirSync(join(project, "src/jobs"), { recursive: true });
  writeFileSync(join(project, "src/jobs/app.ts"), APP);
  writeFileSync(join(project, "sst.config.ts"), SST_CONFIG);
  writeFileSync(join(project, "producer.mjs"), PRODUCER);

  dev = spawn("npx", ["--no-install", "skyforge", "dev"], {
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
}, 300_000);

afterAll(async () => {
  if (dev?.pid && dev.exitCode === null) {
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
    if (dev.exitCode === null) signal("SIGKILL");
  }
  if (where) rmSync(where.parent, { recursive: true, force: true });
}, 30_000);

describe("skyforge as a library, in a project outside the repo", { timeout: 120_000 }, () => {
  let url = "";

  it("npx skyforge dev finds the app from sst.config.ts and serves the user's kinds", async () => {
    url = (await devOutput(/HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/))[1] as string;
    expect(devOut).toContain("src/jobs/app.ts");
    expect(devOut).not.toMatch(/resolved from the skyforge repo|Error:/);
  });

  it("a plain Node script enqueues both kinds through skyforge/client, and both end done", async () => {
    const { stdout } = await execFileAsync("node", ["producer.mjs"], {
      cwd: project,
      env: { ...env, SKYFORGE_ENDPOINT: url },
      timeout: 60_000,
    });
    expect(JSON.parse(stdout)).toEqual({
      greet: ["done", { greeting: "hello Ada" }],
      settle: ["done", { order: "o-42", total: 40, settled: true }],
    });
  });

  it("curl enqueues one, and it ends done", async () => {
    const { stdout } = await execFileAsync("curl", [
      "-s",
      "-X",
      "POST",
      `${url}/jobs`,
      "-H",
      "content-type: application/json",
      "-d",
      '{"kind":"greet","payload":{"name":"curl"}}',
    ]);
    const { id } = JSON.parse(stdout) as { id: string };
    expect(await doneResult(id)).toEqual({ greeting: "hello curl" });
  });

  it("an edit to the plain kind's handler changes the next job's result, without a restart", async () => {
    const from = devOut.length;
    const file = join(project, "src/jobs/app.ts");
    writeFileSync(file, readFileSync(file, "utf8").replace('"hello " + name', '"welcome back, " + name'));
    await devOutput(/^reloaded src\/jobs\/app\.ts: kinds greet, settle$/m, from);
    const answer = await fetch(`${url}/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "greet", payload: { name: "Ada" } }),
    });
    const { id } = (await answer.json()) as { id: string };
    expect(await doneResult(id)).toEqual({ greeting: "welcome back, Ada" });
  });

  it("npx skyforge check-deploy passes, listing the user's queue and its worker, whose bundle holds the user's handler", async () => {
    const { stdout } = await execFileAsync(
      "npx",
      ["--no-install", "skyforge", "check-deploy", "--stage", "ci"],
      {
        cwd: project,
        env,
        timeout: 400_000,
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((err: { stdout?: string; stderr?: string; message: string }) => {
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
  }, 420_000);
});

/** A job's result once it is done (bounded: 30 s). */
async function doneResult(id: string): Promise<unknown> {
  const until = Date.now() + 30_000;
  for (;;) {
    const job = (await (await fetch(`${devUrl()}/jobs/${id}`)).json()) as {
      status: string;
      result?: unknown;
    };
    if (job.status === "done") return job.result;
    if (Date.now() > until) throw new Error(`job ${id} is ${job.status}, not done, after 30 s`);
    await new Promise((wake) => setTimeout(wake, 100));
  }
}

function devUrl(): string {
  return (/HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/.exec(devOut)?.[1] as string) ?? "";
}
