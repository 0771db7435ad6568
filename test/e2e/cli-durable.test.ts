import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { codeBlocks } from "../support/doc-blocks.ts";
import { useCliOnStack } from "../support/skyforge-cli.ts";
import type { Json } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * Durable jobs from `npx skyforge` against the local stack (useCliOnStack;
 * docs/guide/durable-jobs.md): `jobs steps`, `tokens show|complete` and `events send` drive the
 * demo kinds `onboard` (a step, a one-second sleep, a token) and `order-flow` (an event) to done.
 * Every wait is for a state, with a bound.
 */
const { cli, work } = useCliOnStack("skyforge-cli-durable-");
const { run, json } = cli;

/** `jobs steps --json` once the job's answer passes `ready`. */
function stepsWhen(id: string, what: string, ready: (s: Json) => boolean): Promise<Json> {
  return waitFor(
    async () => {
      const s = await json(["jobs", "steps", id]);
      return ready(s) && s;
    },
    `job ${id} ${what}`,
    30_000,
    250,
  );
}

/**
 * A line as docs/guide/cli.md may show it: ids, times and secrets are an example's, and columns are as
 * wide as their cells.
 */
const normalized = (line: string) =>
  line
    .replace(/tok_[0-9A-HJKMNP-TV-Z]{26}/g, "tok_ID")
    .replace(/\b[0-9A-HJKMNP-TV-Z]{26}\b/g, "ID")
    .replace(/\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/g, "TIME")
    .replace(/\s+/g, " ")
    .trim();

/** docs/guide/cli.md's durable CLI block: each `$ npx skyforge …` command, its arguments, and the lines it prints. */
function readmeRuns(): { args: string[]; out: string[] }[] {
  const block = codeBlocks("docs/guide/cli.md", "text").find((b) => b.includes("$ npx skyforge jobs steps"));
  if (!block) throw new Error("docs/guide/cli.md has no block with `npx skyforge jobs steps`");
  const runs: { args: string[]; out: string[] }[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("$ npx skyforge ")) {
      const words = line.slice("$ npx skyforge ".length).matchAll(/'([^']*)'|(\S+)/g);
      runs.push({ args: [...words].map((m) => m[1] ?? m[2] ?? ""), out: [] });
    } else if (line.trim()) runs.at(-1)?.out.push(line);
  }
  return runs;
}

describe("durable jobs through the CLI against the local stack", { timeout: 120_000 }, () => {
  it("onboard: steps and its sleep, then its token wait; tokens complete with the url; done with the approval", async () => {
    const user = `cli-${randomUUID().slice(0, 8)}`;
    const job = await json(["enqueue", "onboard", "--payload", JSON.stringify({ user, sleepSeconds: 1 })]);

    const waiting = await stepsWhen(job.id, "waiting for its token", (s) => s.waiting?.for === "token");
    expect(waiting).toMatchObject({ jobId: job.id, status: "scheduled" });
    expect(waiting.steps.map((s: Json) => [s.name, s.type, s.status])).toEqual([
      ["create-account", "step", "done"],
      ["cool-off", "sleep", "done"],
      ["approval", "token", "done"],
    ]);
    const token = waiting.steps[2].result as { id: string; url: string };
    expect(token.id).toBe(waiting.waiting.token);
    expect(token.url).toMatch(/\/tokens\/tok_\w+\?secret=/);

    // For a person: the table, and the job's detail naming what it waits for.
    const table = await run(["jobs", "steps", job.id]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(`^job ${job.id}: scheduled, waiting for token ${token.id} until `),
    );
    expect(table.stdout).toMatch(/\nNAME +TYPE +STATUS +ATTEMPT +AT +UNTIL\ncreate-account +step +done +1 /);
    expect(table.stdout).toMatch(/\ncool-off +sleep +done +\d+ +\S+ \S+ +\S+ \S+\n/);
    expect((await run(["jobs", "get", job.id])).stdout).toMatch(
      new RegExp(`waiting +token ${token.id} until`),
    );

    const shown = await json(["tokens", "show", token.id]);
    expect(shown).toMatchObject({ id: token.id, jobId: job.id, step: "approval", status: "pending" });
    expect(JSON.stringify(shown)).not.toMatch(/secret/);

    // Without its secret the API refuses (exit 3); a bad --data is a usage error (exit 2), nothing sent.
    const noSecret = await json(["tokens", "complete", token.id, "--data", "{}"], 3);
    expect(noSecret.error).toMatchObject({ code: "forbidden", status: 403 });
    const badData = await run(["tokens", "complete", token.url, "--data", "{approved: yes}"]);
    expect(badData.code).toBe(2);
    expect(badData.stderr).toMatch(/--data <json>.*not JSON/);

    const done = await json(["tokens", "complete", token.url, "--data", '{"approved":true,"by":"cli"}']);
    expect(done).toMatchObject({ id: token.id, jobId: job.id, status: "completed" });
    const again = await json(["tokens", "complete", token.url, "--data", "{}"], 3);
    expect(again.error).toMatchObject({ code: "conflict", status: 409 });

    const ended = await stepsWhen(job.id, "done", (s) => s.status === "done");
    expect(ended.waiting).toBeUndefined();
    expect(ended.steps.map((s: Json) => s.name)).toEqual([
      "create-account",
      "cool-off",
      "approval",
      "send-welcome",
    ]);
    expect((await json(["jobs", "get", job.id])).result).toMatchObject({
      user,
      account: `acct-${user}`,
      approval: { approved: true, by: "cli" },
    });
    expect(await json(["tokens", "show", token.id])).toMatchObject({
      status: "completed",
      data: { approved: true, by: "cli" },
    });
  });

  it("tokens complete takes the secret off the command line: the url from stdin (`-`), or an id's secret from SKYFORGE_TOKEN_SECRET", async () => {
    const tokenOf = async (user: string) => {
      const job = await json(["enqueue", "onboard", "--payload", JSON.stringify({ user, sleepSeconds: 1 })]);
      const waiting = await stepsWhen(job.id, "waiting for its token", (s) => s.waiting?.for === "token");
      return { job: job.id as string, ...(waiting.steps[2].result as { id: string; url: string }) };
    };
    const [piped, fromEnv] = await Promise.all([
      tokenOf(`cli-${randomUUID().slice(0, 8)}`),
      tokenOf(`cli-${randomUUID().slice(0, 8)}`),
    ]);
    const secret = new URL(fromEnv.url).searchParams.get("secret") as string;

    // `echo "$URL" | skyforge tokens complete -`: the url (with its secret) comes in on stdin.
    const viaStdin = await cli.run(["tokens", "complete", "-", "--data", '{"approved":true,"by":"stdin"}'], {
      input: `${piped.url}\n`,
    });
    expect(viaStdin.code, viaStdin.stderr).toBe(0);
    expect(viaStdin.stdout).toMatch(new RegExp(`^completed ${piped.id}: job ${piped.job} resumes`));

    // A bare id: the secret from the environment when --secret isn't given.
    const viaEnv = await cli.run(
      ["tokens", "complete", fromEnv.id, "--data", '{"approved":true,"by":"env"}'],
      {
        env: { SKYFORGE_TOKEN_SECRET: secret },
      },
    );
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    expect(viaEnv.stdout).toMatch(new RegExp(`^completed ${fromEnv.id}: job ${fromEnv.job} resumes`));

    for (const [token, by] of [
      [piped, "stdin"],
      [fromEnv, "env"],
    ] as const)
      expect(await json(["tokens", "show", token.id])).toMatchObject({
        status: "completed",
        data: { approved: true, by },
      });

    // Nothing on stdin is a usage error, and nothing is sent.
    const empty = await cli.run(["tokens", "complete", "-", "--json"], { input: "" });
    expect(empty.code).toBe(2);
    expect(JSON.parse(empty.stderr).error.message).toMatch(/stdin/);
  });

  it("order-flow: waits for its event; events send resumes it (once) with the event's data", async () => {
    const order = `o-${randomUUID().slice(0, 8)}`;
    const job = await json(["enqueue", "order-flow", "--payload", JSON.stringify({ order })]);
    const waiting = await stepsWhen(job.id, "waiting for its event", (s) => s.waiting?.for === "event");
    expect(waiting.waiting).toMatchObject({ for: "event", event: "order.paid", match: order });
    expect(waiting.steps).toEqual([
      expect.objectContaining({ name: "paid", type: "event", status: "waiting" }),
    ]);

    const badData = await run(["events", "send", "order.paid", "--match", order, "--data", "nope"]);
    expect(badData.code).toBe(2);
    const noMatch = await run(["events", "send", "order.paid", "--json"]);
    expect(noMatch.code).toBe(2);
    expect(JSON.parse(noMatch.stderr).error.message).toMatch(/--match <value>' not specified/);
    // Another order's event resumes nothing.
    expect(await json(["events", "send", "order.paid", "--match", `${order}-other`])).toEqual({ resumed: 0 });

    const sent = await run(["events", "send", "order.paid", "--match", order, "--data", '{"amount":42}']);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe(`order.paid (match ${order}): resumed 1 job\n`);
    const ended = await stepsWhen(job.id, "done", (s) => s.status === "done");
    expect(ended.steps).toEqual([
      expect.objectContaining({ name: "paid", status: "done", result: { amount: 42 } }),
    ]);
    expect((await json(["jobs", "get", job.id])).result).toEqual({ order, paid: { amount: 42 } });
    expect(await json(["events", "send", "order.paid", "--match", order])).toEqual({ resumed: 0 });
  });

  it("docs/guide/cli.md's durable block: each command as written, each line as the CLI prints it (ids, times and widths aside)", async () => {
    const runs = readmeRuns();
    expect(runs.map((r) => r.args.slice(0, 2).join(" "))).toEqual([
      "enqueue order-flow",
      "enqueue onboard",
      "jobs steps",
      "tokens complete",
      "events send",
    ]);
    // The block's own jobs, by kind, from what its enqueues printed: nothing is enqueued for it here.
    const enqueued = new Map<string, string>();
    for (const { args, out } of runs) {
      let argv = args;
      if (args[0] === "jobs" || args[0] === "tokens") {
        // A person reads the url off `jobs steps --json` once the job waits for its token.
        const job = enqueued.get("onboard") as string;
        const steps = await stepsWhen(job, "waiting for its token", (s) => s.waiting?.for === "token");
        const url = steps.steps.find((s: Json) => s.type === "token").result.url as string;
        argv = args.map((a) => (a.includes("/tokens/") ? url : /^[0-9A-Z]{26}$/.test(a) ? job : a));
      }
      if (args[0] === "events") {
        // The event finds the order-flow job the block enqueued first, waiting by now (bounded here).
        const flow = enqueued.get("order-flow") as string;
        await stepsWhen(flow, "waiting for its event", (s) => s.waiting?.for === "event");
      }
      const r = await run(argv);
      expect(r.code, `skyforge ${argv.join(" ")}\n${r.stderr}`).toBe(0);
      expect(r.stdout.trimEnd().split("\n").map(normalized), argv.join(" ")).toEqual(out.map(normalized));
      const made = /^enqueued (\w+) \(([\w-]+) on/.exec(r.stdout);
      if (made) enqueued.set(made[2] as string, made[1] as string);
    }
    await stepsWhen(enqueued.get("onboard") as string, "done", (s) => s.status === "done");
    await stepsWhen(enqueued.get("order-flow") as string, "done", (s) => s.status === "done");
  });

  it("durable fixture records a suspended job's journal as a file (no token secret); durable waiting counts suspended jobs per kind and version", async () => {
    const user = `cli-${randomUUID().slice(0, 8)}`;
    const job = await json(["enqueue", "onboard", "--payload", JSON.stringify({ user, sleepSeconds: 1 })]);
    await stepsWhen(job.id, "waiting for its token", (s) => s.waiting?.for === "token");

    const wrote = await json(["durable", "fixture", job.id]);
    const file = join(work, "durable-fixtures", "onboard", `${job.id}.json`);
    expect(wrote).toMatchObject({ file, kind: "onboard", status: "scheduled", ops: 3 });
    const text = readFileSync(file, "utf8");
    const fixture = JSON.parse(text);
    expect(fixture).toMatchObject({
      format: 1,
      kind: "onboard",
      jobId: job.id,
      payload: { user, sleepSeconds: 1 },
    });
    expect(fixture.version).toBe((await json(["jobs", "get", job.id])).version);
    expect(fixture.ops.map((o: Json) => [o.name, o.op, o.place, o.status])).toEqual([
      ["create-account", "step", 1, "done"],
      ["cool-off", "sleep", 2, "done"],
      ["approval", "token", 3, "done"],
    ]);
    expect(text).toContain("secret=removed");
    expect(text).not.toMatch(/secret=(?!removed)/);
    // Bad input: the file is there (exit 2, untouched), a job that doesn't exist (the API's 404: exit 3).
    const again = await run(["durable", "fixture", job.id]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/exists: pass --force/);
    expect(readFileSync(file, "utf8")).toBe(text);
    expect((await run(["durable", "fixture", job.id, "--force"])).code).toBe(0);
    const unknown = await json(["durable", "fixture", "01JZZZZZZZZZZZZZZZZZZZZZZZ"], 3);
    expect(unknown.error).toMatchObject({ code: "not_found", status: 404 });

    const counted = await json(["durable", "waiting"]);
    expect(counted.complete).toBe(true);
    const row = counted.waiting.find((w: Json) => w.kind === "onboard" && w.version === fixture.version);
    expect(row).toMatchObject({ queue: "default", kind: "onboard", version: fixture.version });
    expect(row.jobs).toBeGreaterThanOrEqual(1);
    const table = await run(["durable", "waiting", "--queue", "default"]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^QUEUE +KIND +VERSION +JOBS\n/);
    expect(table.stdout).toMatch(new RegExp(`\\ndefault +onboard +${fixture.version} +${row.jobs}\\n`));
    const badQueue = await json(["durable", "waiting", "--queue", "nope"], 3);
    expect(badQueue.error).toMatchObject({ code: "validation_error", status: 400 });
    expect(badQueue.error.message).toMatch(/queue nope is not declared/);
  });
});
