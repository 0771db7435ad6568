import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { closedPort, useCliOnStack } from "../support/skyforge-cli.ts";
import type { Json } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * `npx skyforge …` as an operator runs it: the real launcher (bin/skyforge.mjs, started with a
 * plain `node`) against the local stack (useCliOnStack), output parsed as a script would (`--json`)
 * or read as a person would (tables), exit codes checked. The bulk enqueue has its own file
 * (cli-bulk.test.ts).
 */
const { call, cli } = useCliOnStack("skyforge-cli-e2e-");
const { run, json } = cli;

// Each test starts the CLI (a Node 24 process under tsx) up to nine times: under the whole suite's
// load one start takes seconds, so a test gets three times the suite's default.
describe("skyforge CLI against the local stack", { timeout: 90_000 }, () => {
  it("tail --json follows a job from queued to done, each change from where the last ended, and stops cleanly at Ctrl-C", async () => {
    const tail = cli.start(["tail", "--json", "--interval", "0.2"]);
    try {
      await waitFor(
        async () => tail.stderr().includes("tail: following"),
        "tail to take its first look",
        30_000,
      );
      // Paused, the job stays queued until tail has printed it.
      expect((await json(["queues", "pause", "default"])).paused).toBe(true);
      const job = await json(["enqueue", "sleep", "--payload", '{"ms":1000}']);
      const changesOf = () =>
        tail
          .stdout()
          .split("\n")
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Json)
          .filter((c) => c.id === job.id);
      await waitFor(async () => changesOf().length === 1, "tail to print the queued job", 20_000);
      expect((await json(["queues", "resume", "default"])).paused).toBe(false);
      await waitFor(async () => changesOf().some((c) => c.to === "done"), "tail to print done", 30_000);
      const changes = changesOf();
      const done = await json(["jobs", "get", job.id]);
      expect(changes[0]).toMatchObject({
        from: null,
        to: "queued",
        kind: "sleep",
        queue: "default",
        time: job.createdAt,
        attempts: 0,
      });
      expect(changes.at(-1)).toMatchObject({ to: "done", time: done.finishedAt, attempts: 1 });
      // Tail compares looks: it sees running only if a look fell inside the run, and otherwise
      // says queued → done. Either way each change starts where the one before it ended.
      for (let i = 1; i < changes.length; i++) expect(changes[i]?.from).toBe(changes[i - 1]?.to);
      expect([
        [
          ["queued", "running"],
          ["running", "done"],
        ],
        [["queued", "done"]],
      ]).toContainEqual(changes.slice(1).map((c) => [c.from, c.to]));
      const running = changes.find((c) => c.to === "running");
      if (running) expect(running.time).toBe(done.startedAt);
      // Ctrl-C at a terminal: the launcher and the CLI both get SIGINT (the CLI twice, once
      // forwarded), and tail stops cleanly.
      tail.interrupt("group");
      expect(await tail.exit()).toBe(0);
      expect(tail.stderr()).toContain("tail: stopped");
    } finally {
      tail.kill();
    }
  }, 90_000);

  it("--json for queues ls; pause and resume change the state; set changes settings", async () => {
    const before = await json(["queues", "ls"]);
    expect(before.items.map((q: Json) => q.name)).toEqual(["default", "batch", "heavy"]);
    expect(before.items[0]).toMatchObject({ paused: false, counts: { visible: expect.any(Number) } });
    // The same answer through Lambda Invoke of the API function.
    const invoked = await json(["--transport", "invoke", "queues", "ls"]);
    expect(invoked.items.map((q: Json) => [q.name, q.paused, q.maxConcurrency])).toEqual(
      before.items.map((q: Json) => [q.name, q.paused, q.maxConcurrency]),
    );

    expect(await json(["queues", "pause", "heavy"])).toMatchObject({ name: "heavy", paused: true });
    const heavyOf = (listed: Json) => listed.items.find((q: Json) => q.name === "heavy");
    expect(heavyOf(await json(["queues", "ls"]))).toMatchObject({ name: "heavy", paused: true });
    const table = await run(["queues", "ls"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^NAME +STATE +CONCURRENCY/);
    expect(table.stdout).toMatch(/\nheavy +paused +2 /);
    expect(await json(["queues", "resume", "heavy"])).toMatchObject({ name: "heavy", paused: false });
    expect(heavyOf(await json(["queues", "ls"]))).toMatchObject({ paused: false });

    expect(
      await json(["queues", "set", "default", "--max-concurrency", "20", "--backoff-base", "1"]),
    ).toMatchObject({ name: "default", maxConcurrency: 20, backoff: { baseSeconds: 1, maxSeconds: 3600 } });
    // The API's own range check, its code named, exit 3.
    const refused = await json(["queues", "set", "default", "--max-concurrency", "1"], 3);
    expect(refused.error).toMatchObject({ code: "validation_error", status: 400 });
    expect(refused.error.issues[0].path).toBe("maxConcurrency");
  });

  it("--json for enqueue, jobs get and jobs ls", async () => {
    const enqueued = await json([
      "enqueue",
      "echo",
      "--payload",
      '{"from":"cli"}',
      "--unique-key",
      "cli-one",
    ]);
    expect(enqueued).toMatchObject({
      kind: "echo",
      queue: "default",
      duplicate: false,
      payload: { from: "cli" },
    });
    const finished = await waitFor(async () => {
      const job = await json(["jobs", "get", enqueued.id]);
      return job.status === "done" ? job : undefined;
    }, "the job to be done");
    expect(finished).toMatchObject({
      id: enqueued.id,
      attempts: 1,
      result: { from: "cli" },
      uniqueKey: "cli-one",
    });

    const later = await json(["enqueue", "echo", "--payload", "{}", "--run-at", "2099-01-01T00:00:00Z"]);
    expect(later).toMatchObject({ status: "scheduled", runAt: "2099-01-01T00:00:00.000Z" });
    const page = await json(["jobs", "ls", "--queue", "default", "--limit", "1"]);
    expect(page.items).toHaveLength(1);
    expect(page.items[0].queue).toBe("default");
    const done = await json(["jobs", "ls", "--status", "done", "--all"]);
    expect(done.cursor).toBeUndefined();
    expect(done.items.map((j: Json) => j.id)).toContain(enqueued.id);
    expect(done.items.every((j: Json) => j.status === "done")).toBe(true);
    // queue + scheduled: the status index.
    const scheduled = await json(["jobs", "ls", "--queue", "default", "--status", "scheduled"]);
    expect(scheduled.items.map((j: Json) => j.id)).toEqual([later.id]);
    const table = await run(["jobs", "ls", "--status", "scheduled", "--queue", "default"]);
    expect(table.stdout.split("\n")[0]).toMatch(
      /^ID +KIND +QUEUE +STATUS +ATTEMPTS +CREATED +FINISHED +ERROR$/,
    );
    expect(table.stdout.split("\n")[1]).toMatch(new RegExp(`^${later.id} +echo +default +scheduled +0/3 `));
    // Search: --tag reads the tag index, newest first; --kind, --since and --status narrow it.
    const tag = `cli-${Date.now()}`;
    const first = (await call("POST", "/jobs", { kind: "echo", payload: 1, tags: [tag] })).body.id as string;
    const second = (await call("POST", "/jobs", { kind: "echo", payload: 2, tags: ["x", tag] })).body
      .id as string;
    const byTag = await json(["jobs", "ls", "--tag", tag, "--kind", "echo", "--since", "1h"]);
    const created = await Promise.all(
      [first, second].map(async (id) => (await call("GET", `/jobs/${id}`)).body as Json),
    );
    const newestFirst = created
      .sort(
        (a, b) =>
          String(b.createdAt).localeCompare(String(a.createdAt)) || String(b.id).localeCompare(String(a.id)),
      )
      .map((j) => j.id);
    expect(byTag.items.map((j: Json) => j.id)).toEqual(newestFirst);
    expect((await json(["jobs", "ls", "--tag", tag, "--kind", "fail"])).items).toEqual([]);
    expect((await json(["jobs", "ls", "--tag", tag, "--since", "2099-01-01T00:00:00Z"])).items).toEqual([]);

    const human = await run(["jobs", "get", enqueued.id]);
    expect(human.stdout).toMatch(/^id +01/);
    expect(human.stdout).toMatch(/\nresult +\{"from":"cli"\}/);
  });

  it("jobs cancel and retry, with the API's answers and codes", async () => {
    const later = await json(["enqueue", "echo", "--payload", "1", "--delay", "3600"]);
    expect(later.status).toBe("scheduled");
    expect(await json(["jobs", "cancel", later.id])).toMatchObject({
      status: "cancelled",
      cancel: "cancelled",
    });
    expect(await json(["jobs", "cancel", later.id])).toMatchObject({ cancel: "already_cancelled" });
    const retried = await json(["jobs", "retry", later.id]);
    expect(["queued", "scheduled"]).toContain(retried.status);
    expect(retried.attempts).toBe(0);

    // A finished job can't be cancelled: 409, exit 3.
    const quick = await json(["enqueue", "echo", "--payload", "2"]);
    await waitFor(
      async () => (await call("GET", `/jobs/${quick.id}`)).body.status === "done",
      "the job to be done",
    );
    expect((await json(["jobs", "cancel", quick.id], 3)).error).toMatchObject({
      code: "conflict",
      status: 409,
    });
    const human = await run(["jobs", "retry", quick.id]);
    expect(human.code).toBe(3);
    expect(human.stderr).toMatch(/^error: conflict \(HTTP 409\): /);
  });

  it("schedules put, ls and rm", async () => {
    const put = await json([
      "schedules",
      "put",
      "cli-hourly",
      "--cron",
      "0 0 * * * *",
      "--kind",
      "echo",
      "--payload",
      '{"from":"cli"}',
      "--timezone",
      "Europe/Paris",
    ]);
    expect(put).toMatchObject({ name: "cli-hourly", timezone: "Europe/Paris", enabled: true, source: "api" });
    expect(put.nextRunAt).toEqual(expect.any(String));
    const listed = await json(["schedules", "ls"]);
    expect(listed.items.map((s: Json) => s.name)).toEqual(["cli-hourly", "heartbeat-echo"]);
    expect(
      await json(["schedules", "put", "cli-hourly", "--cron", "0 0 * * * *", "--kind", "echo", "--disabled"]),
    ).toMatchObject({ enabled: false });
    const badCron = await json(["schedules", "put", "cli-bad", "--cron", "nope", "--kind", "echo"], 3);
    expect(badCron.error.code).toBe("validation_error");

    expect(await json(["schedules", "rm", "cli-hourly"])).toEqual({ name: "cli-hourly", removed: true });
    expect((await json(["schedules", "ls"])).items.map((s: Json) => s.name)).toEqual(["heartbeat-echo"]);
    expect((await json(["schedules", "rm", "cli-hourly"], 3)).error.code).toBe("not_found");
    expect((await json(["schedules", "rm", "heartbeat-echo"], 3)).error.code).toBe("conflict");
  });

  it("groups get, children (paged, filtered), seal and cancel", async () => {
    const created = await call("POST", "/groups", {
      id: "cli-group",
      children: [1, 2, 3].map((row) => ({ kind: "score-row", payload: { row } })),
      onComplete: { kind: "write-report", payload: { title: "cli" } },
      sealed: false,
    });
    expect(created.status).toBe(201);
    await waitFor(
      async () => (await json(["groups", "get", "cli-group"])).counts.done === 3,
      "the three children done",
      20_000,
    );
    const first = await json(["groups", "children", "cli-group", "--limit", "2"]);
    expect(first.items.map((c: Json) => c.status)).toEqual(["done", "done"]);
    const rest = await json(["groups", "children", "cli-group", "--limit", "2", "--cursor", first.cursor]);
    expect(rest.items.map((c: Json) => c.result)).toEqual([{ row: 3, score: 1 }]);
    expect((await json(["groups", "children", "cli-group", "--status", "dead"])).items).toEqual([]);
    // Every child ended already: the seal starts the completion at once.
    expect((await json(["groups", "seal", "cli-group"])).status).toMatch(/^(completing|succeeded)$/);
    const table = await run(["groups", "get", "cli-group"]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^ID +STATUS +FAILURE +TOTAL/);
    expect(table.stdout).toMatch(/\ncli-group +(completing|succeeded) +continue +3 +0 +3 /);
    await waitFor(async () => (await json(["groups", "get", "cli-group"])).status === "succeeded", "done");
    expect((await json(["groups", "cancel", "cli-group"], 3)).error.code).toBe("conflict");
    expect((await json(["groups", "get", "no-such-group"], 3)).error.code).toBe("not_found");
    expect((await run(["groups", "children", "cli-group", "--status", "bogus"])).code).toBe(2);
  });

  it("exit codes: 3 for a 404, 2 for a usage error, 4 for an endpoint that doesn't answer", async () => {
    const missing = await json(["jobs", "get", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], 3);
    expect(missing.error).toMatchObject({ code: "not_found", status: 404 });
    const human = await run(["jobs", "get", "01ARZ3NDEKTSV4RRFFQ69G5FAV"]);
    expect(human).toMatchObject({ code: 3, stdout: "" });
    expect(human.stderr).toBe("error: not_found (HTTP 404): job 01ARZ3NDEKTSV4RRFFQ69G5FAV not found\n");

    expect((await json(["jobs", "ls", "--limit", "0"], 2)).error).toMatchObject({ code: "usage" });
    expect((await json(["enqueue"], 2)).error.message).toMatch(/name the job's kind/);
    expect((await json(["enqueue", "echo", "--file", "x.jsonl"], 2)).error.message).toMatch(/not both/);
    expect((await json(["enqueue", "--file", "missing.jsonl"], 2)).error.message).toMatch(
      /cannot read missing\.jsonl/,
    );

    const closed = await closedPort();
    const down = await json(["--endpoint", `http://127.0.0.1:${closed}`, "queues", "ls"], 4);
    expect(down.error.code).toBe("unreachable");
    expect(down.error.message).toContain("ECONNREFUSED");
  });

  const systemNode = ["/usr/bin/node", "/usr/local/bin/node"].find((p) => existsSync(p));
  it.skipIf(systemNode === undefined)(
    "runs on the system's own node, as npx does (the launcher starts Node 24 itself)",
    async () => {
      const system = systemNode as string;
      const listed = await run(["queues", "ls", "--json"], { node: system });
      expect(listed.code, listed.stderr).toBe(0);
      expect(JSON.parse(listed.stdout).items).toHaveLength(3);
      const version = await run(["--version"], { node: system });
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+ \(node v24\.\d+\.\d+\)$/);
    },
  );

  it("console serves the web console on loopback and forwards its API calls, until Ctrl-C", async () => {
    const server = cli.start(["console", "--json"]);
    try {
      const started = await waitFor(
        async () => (server.stdout().includes("\n") ? (JSON.parse(server.stdout()) as Json) : undefined),
        "the console to print its address",
        30_000,
      );
      expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/#token=[\w-]{43}$/);
      const page = await fetch(started.url);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
      // API calls carry the token of the printed address (test/e2e/browser/console-security.ts).
      const token = { "x-skyforge-console-token": String(started.url).split("#token=")[1] };
      const queues = await fetch(new URL("/queues", started.url), { headers: token });
      expect(queues.status).toBe(200);
      expect(((await queues.json()) as Json).items.map((q: Json) => q.name)).toEqual([
        "default",
        "batch",
        "heavy",
      ]);
      // `kill -INT <launcher pid>`: the launcher forwards it, the console closes, exit 0.
      server.interrupt("pid");
      expect(await server.exit()).toBe(0);
    } finally {
      server.kill();
    }
  });
});
