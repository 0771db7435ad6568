import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dataDirHolder } from "../../local/data-dir.ts";
import { type DevProcess, startDevProcess } from "../support/dev-process.ts";
import { projectRoot } from "../support/project-copy.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * `skyforge dev` in a user's project outside the repo (issue #38): the app module named by the
 * project's sst.config.ts, kinds in the user's own tree importing the engine by absolute path (the
 * installed package's path is test/e2e/… of the package). One stack process serves every scenario
 * in order: each edit is awaited by the line the stack prints for it, each job by its status.
 */
const project = mkdtempSync(join(tmpdir(), "skyforge-dev-project-"));
const dataDir = mkdtempSync(join(tmpdir(), "skyforge-dev-data-"));
const lib = (path: string) => JSON.stringify(join(projectRoot, "lib", path));

function write(path: string, text: string): void {
  mkdirSync(join(project, path, ".."), { recursive: true });
  writeFileSync(join(project, path), text);
}

/**
 * The app module: the queue and the kinds listed, each from src/jobs/kinds/<name>.ts. The queue's
 * 5 s batching window is its pollers' long poll: a reload always finds one in flight, and a job
 * enqueued just after must still reach the new pollers at once (EventSourcePoller.retire).
 */
function appModule(kinds: readonly string[]): string {
  return `import { defineApp, defineQueues, poolKindBuilder } from ${lib("declarations/define-app.ts")};
${kinds.map((k) => `import { ${k} } from "./kinds/${k}.ts";`).join("\n")}

const settings = { maxConcurrency: 2, recordConcurrency: 1, workerTimeoutSeconds: 30, leaseSeconds: 30,
  backoff: { baseSeconds: 1, maxSeconds: 10 }, retentionDays: { done: 1, dead: 1 }, maxReceiveCount: 10 };
const queues = defineQueues([
  { name: "main", batchSize: 1, batchWindowSeconds: 5, ...settings },
  { name: "crunch", tier: "pool", batchSize: 1, batchWindowSeconds: 1, ...settings },
]);
const crunch = poolKindBuilder()({
  name: "crunch-digest",
  argv: [${JSON.stringify(process.execPath)}, ${JSON.stringify(join(projectRoot, "children/digest.mjs"))}],
  queue: "crunch",
  timeoutSeconds: 20,
});
export default defineApp({ queues, kinds: [${kinds.join(", ")}], poolKinds: [crunch], schedules: [], rateLimits: [] });
`;
}

/** A plain kind whose result carries `version`, so a reload shows in the next job's result. */
function plainKind(version: number): string {
  return `import * as z from "zod";
import { kindBuilder } from ${lib("declarations/define-app.ts")};

export const plain = kindBuilder()({
  name: "plain",
  payload: z.object({ n: z.number() }),
  queue: "main",
  maxAttempts: 3,
  timeoutSeconds: 10,
  handler: async ({ n }) => ({ version: ${version}, doubled: n * 2 }),
});
`;
}

const durableKind = `import * as z from "zod";
import { kindBuilder } from ${lib("declarations/define-app.ts")};

export const durable = kindBuilder()({
  name: "durable",
  payload: z.object({ user: z.string() }),
  queue: "main",
  maxAttempts: 3,
  timeoutSeconds: 10,
  handler: async ({ user }, ctx) => {
    const { account } = await ctx.step("create-account", async () => ({ account: "acct-" + user }));
    return { account };
  },
});
`;

const extraKind = `import * as z from "zod";
import { kindBuilder } from ${lib("declarations/define-app.ts")};

export const extra = kindBuilder()({
  name: "extra",
  payload: z.object({}),
  queue: "main",
  maxAttempts: 1,
  timeoutSeconds: 10,
  handler: async () => ({ added: true }),
});
`;

let dev: DevProcess;
let url = "";
const { call, untilStatus } = stackHttp(() => url);

beforeAll(async () => {
  // What a user's project holds: its own packages (zod), its sst.config.ts naming the app module.
  mkdirSync(join(project, "node_modules"));
  symlinkSync(join(projectRoot, "node_modules/zod"), join(project, "node_modules/zod"), "dir");
  write(
    "sst.config.ts",
    `export default $config({
  app: () => ({ name: "shop", home: "aws" }),
  async run() {
    const { Skyforge } = await import("skyforge/sst");
    // new Skyforge("Old", { app: "src/old/app.ts" }) was the first try
    const jobs = new Skyforge("Jobs", { app: "src/jobs/app.ts" });
    new sst.aws.Function("Web", { handler: "src/web.handler", link: [jobs] });
  },
});
`,
  );
  write("src/jobs/app.ts", appModule(["plain", "durable"]));
  write("src/jobs/kinds/plain.ts", plainKind(1));
  write("src/jobs/kinds/durable.ts", durableKind);
  dev = startDevProcess(project, [], { PORT: "0", SKYFORGE_DATA_DIR: dataDir });
  url = (await dev.untilOutput(/HTTP API\s+(http:\/\/127\.0\.0\.1:\d+)/, { boundMs: 60_000 }))[1] as string;
}, 90_000);

afterAll(async () => {
  await dev?.interrupt();
  rmSync(project, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

async function enqueue(body: object): Promise<string> {
  const res = await call("POST", "/jobs", body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id as string;
}

/** Writes `files`, then resolves with the stdout line announcing the reload that follows. */
async function edit(files: Record<string, string>): Promise<string> {
  const from = dev.stdout().length;
  for (const [path, text] of Object.entries(files)) write(path, text);
  return (await dev.untilOutput(/^reloaded .*$/m, { from }))[0];
}

describe("skyforge dev over a user's project", () => {
  it("finds the app from sst.config.ts and runs its kinds, its pool kind in the pool process; jobs enqueued over HTTP end done", async () => {
    expect(dev.stdout()).toMatch(/app\s+src\/jobs\/app\.ts/);
    expect(dev.stdout()).toMatch(/kinds\s+plain, durable\n/);
    expect(dev.stdout()).toMatch(/pool kinds\s+crunch-digest /);
    expect(dev.stdout()).toContain(`data           ${dataDir}`);
    const plain = await enqueue({ kind: "plain", payload: { n: 21 } });
    const durable = await enqueue({ kind: "durable", payload: { user: "ada" } });
    const crunch = await enqueue({ kind: "crunch-digest", payload: { text: "hi", rounds: 1 } });
    expect((await untilStatus(plain, "done")).result).toEqual({ version: 1, doubled: 42 });
    expect((await untilStatus(durable, "done")).result).toEqual({ account: "acct-ada" });
    expect(await untilStatus(crunch, "done")).toMatchObject({ queue: "crunch", result: { rounds: 1 } });
  });

  it("an edited handler runs the next job, a job queued before the edit included, with no restart", async () => {
    const pid = dataDirHolder(dataDir);
    expect((await call("POST", "/queues/main/pause")).status).toBe(200);
    const queued = await enqueue({ kind: "plain", payload: { n: 1 } });
    expect((await call("GET", `/jobs/${queued}`)).body.status).toBe("queued");

    expect(await edit({ "src/jobs/kinds/plain.ts": plainKind(2) })).toBe(
      "reloaded src/jobs/app.ts: kinds plain, durable",
    );
    expect((await call("GET", `/jobs/${queued}`)).body.status).toBe("queued");
    expect((await call("POST", "/queues/main/resume")).status).toBe(200);
    expect((await untilStatus(queued, "done")).result).toEqual({ version: 2, doubled: 2 });
    expect(dataDirHolder(dataDir)).toBe(pid);
  });

  it("a kind added while it runs is accepted without a restart", async () => {
    const before = await call("POST", "/jobs", { kind: "extra", payload: {} });
    expect(before.status).toBe(400);
    expect(before.body.error.code).toBe("unknown_kind");

    const line = await edit({
      "src/jobs/kinds/extra.ts": extraKind,
      "src/jobs/app.ts": appModule(["plain", "durable", "extra"]),
    });
    expect(line).toBe("reloaded src/jobs/app.ts: kinds plain, durable, extra");
    expect((await untilStatus(await enqueue({ kind: "extra", payload: {} }), "done")).result).toEqual({
      added: true,
    });
  });

  it("a kind file that doesn't compile: its error in one block, and the previous kinds keep serving", async () => {
    const from = dev.stderr().length;
    const stdoutFrom = dev.stdout().length;
    write("src/jobs/kinds/plain.ts", plainKind(3).replace("handler: async", "handler: async async ("));
    const block = (
      await dev.untilOutput(/^src\/jobs\/app\.ts not reloaded; the previous kinds keep serving:\n[\s\S]*$/m, {
        from,
        stream: "stderr",
      })
    )[0];
    expect(block).toMatch(/does not compile:\n.*ERROR.*\n[\s\S]*src\/jobs\/kinds\/plain\.ts:\d+:\d+/);
    expect(dev.stdout().slice(stdoutFrom)).not.toContain("reloaded");
    expect((await untilStatus(await enqueue({ kind: "plain", payload: { n: 5 } }), "done")).result).toEqual({
      version: 2,
      doubled: 10,
    });
    expect((await untilStatus(await enqueue({ kind: "extra", payload: {} }), "done")).result).toEqual({
      added: true,
    });

    // Fixed, it reloads again.
    expect(await edit({ "src/jobs/kinds/plain.ts": plainKind(4) })).toMatch(/^reloaded /);
    expect((await untilStatus(await enqueue({ kind: "plain", payload: { n: 5 } }), "done")).result).toEqual({
      version: 4,
      doubled: 10,
    });
  });

  it("where no app can be found: exit 2 and one usage line", async () => {
    const empty = mkdtempSync(join(tmpdir(), "skyforge-dev-empty-"));
    try {
      const none = startDevProcess(empty, [], { PORT: "0" });
      expect(await none.exited).toBe(2);
      expect(none.stdout()).toBe("");
      const lines = none.stderr().trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^no app to run: .*src\/jobs\/app\.ts.*usage: skyforge dev \[--app <module>\]/,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
