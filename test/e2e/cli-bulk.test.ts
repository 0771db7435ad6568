import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closedPort, useCliOnStack } from "../support/skyforge-cli.ts";
import type { Json } from "../support/stack-http.ts";
import { waitFor } from "../support/wait.ts";

/**
 * `npx skyforge enqueue --file jobs.jsonl` against the local stack (useCliOnStack: `npm start`'s,
 * in this process): a file with bad lines, and 10 000 lines that all run to done. The stack runs
 * about 250 echo jobs a second on two cores, so the 10 000 take about 40 s alone (one run as
 * `npm start`, 2026-12-02).
 */
const { work, call, cli } = useCliOnStack("skyforge-cli-bulk-");
const { run, json, writeLines } = cli;

describe("skyforge enqueue --file against the local stack", () => {
  it("enqueue --file with bad lines: exit 1, every bad line listed with its code, the good ones enqueued", async () => {
    const key = `cli-bad-${Date.now()}`;
    const file = writeLines("bad.jsonl", [
      JSON.stringify({ kind: "echo", payload: { n: 1 }, uniqueKey: `${key}-1` }),
      "{this is not json",
      JSON.stringify({ kind: "echo", payload: { n: 3 }, uniqueKey: `${key}-3` }),
      JSON.stringify({ payload: { n: 4 } }),
      JSON.stringify({ kind: "no-such-kind", payload: {} }),
      JSON.stringify({ kind: "sleep", payload: { ms: "long" } }),
      "",
      JSON.stringify({ kind: "echo", payload: { n: 8 }, uniqueKey: `${key}-8` }),
    ]);
    // Paused, the good jobs stay unfinished, so the second run finds their unique keys taken.
    await json(["queues", "pause", "default"]);
    let first: Json;
    let second: { code: number | null; stdout: string };
    try {
      first = await json(["enqueue", "--file", file], 1);
      second = await run(["enqueue", "--file", file]);
    } finally {
      await json(["queues", "resume", "default"]);
    }
    expect(first).toMatchObject({ lines: 7, enqueued: 3, duplicate: 0 });
    expect(first.failed.map((f: Json) => [f.line, f.code])).toEqual([
      [2, "invalid_json"],
      [4, "validation_error"],
      [5, "unknown_kind"],
      [6, "validation_error"],
    ]);
    expect(first.failed[3].issues).toEqual([{ path: "payload.ms", message: expect.any(String) }]);
    expect(first.jobs.map((j: Json) => j.line)).toEqual([1, 3, 8]);

    expect(second.code).toBe(1);
    expect(second.stdout.split("\n").map((l) => l.replace(/ {2,}/g, "  ").trim())).toEqual([
      `enqueued 0, duplicate 3, failed 4 (7 lines from ${file})`,
      "failed lines:",
      "LINE  CODE  ERROR",
      expect.stringMatching(/^line 2 {2}invalid_json {2}not JSON: /),
      `line 4  validation_error  "kind" is missing: every line names its job's kind`,
      expect.stringMatching(/^line 5 {2}unknown_kind {2}unknown kind "no-such-kind"; known kinds: echo, /),
      expect.stringMatching(
        /^line 6 {2}validation_error {2}payload does not match kind "sleep" \(payload\.ms: /,
      ),
      "",
    ]);
    for (const { id } of first.jobs) {
      await waitFor(
        async () => (await call("GET", `/jobs/${id}`)).body.status === "done",
        `job ${id} to be done`,
      );
    }
  });

  it("enqueue --file - reads the lines from stdin", async () => {
    const input = ['{"kind":"echo","payload":"a"}', "", '{"kind":"echo","payload":"b"}', "[]"].join("\r\n");
    const r = await run(["enqueue", "--file", "-", "--json"], { input });
    expect(r.code).toBe(1);
    const summary = JSON.parse(r.stdout) as Json;
    expect(summary).toMatchObject({ file: "stdin", lines: 3, enqueued: 2 });
    expect(summary.jobs.map((j: Json) => j.line)).toEqual([1, 3]);
    expect(summary.failed).toEqual([
      { line: 4, code: "validation_error", message: 'expected an object with a "kind", got an array' },
    ]);
  });

  it("enqueue --file from a FIFO (as `<(jq …)` gives) sends every line: a pipe is read once, by the run", async () => {
    const fifo = join(work, "jobs.fifo");
    execFileSync("mkfifo", [fifo]);
    const p = cli.start(["enqueue", "--file", fifo, "--json"]);
    try {
      // Opening a FIFO for writing waits for its reader: the CLI.
      await writeFile(
        fifo,
        `${['{"kind":"echo","payload":"f1"}', "", '{"kind":"echo","payload":"f2"}'].join("\n")}\n`,
      );
      expect(await p.exit(20_000), p.stderr()).toBe(0);
    } finally {
      p.kill();
    }
    const summary = JSON.parse(p.stdout()) as Json;
    expect(summary).toMatchObject({ file: fifo, lines: 2, enqueued: 2, failed: [] });
    expect(summary.jobs.map((j: Json) => j.line)).toEqual([1, 3]);
  });

  it("a refusal from in front of the API (API Gateway's 403) stops the run: exit 4, its lines not queued, the rest not sent", async () => {
    let requests = 0;
    const gateway = createServer((_req, res) => {
      requests += 1;
      res.writeHead(403, { "content-type": "application/json" }).end('{"message":"Forbidden"}');
    });
    await new Promise<void>((resolve) => gateway.listen(0, "127.0.0.1", resolve));
    try {
      const endpoint = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
      const file = writeLines(
        "forbidden.jsonl",
        Array.from({ length: 250 }, (_, i) => JSON.stringify({ kind: "echo", payload: i })),
      );
      const args = ["--endpoint", endpoint, "enqueue", "--file", file, "--concurrency", "1"];
      const human = await run(args);
      expect(human.code, human.stderr).toBe(4);
      expect(requests).toBe(1);
      const lines = human.stdout.split("\n");
      const refusal = `HTTP 403 that is not the skyforge API's answer: {"message":"Forbidden"}`;
      expect(lines[0]).toBe(`enqueued 0, duplicate 0, failed 100 (100 lines from ${file})`);
      expect(lines[3]).toBe(`  lines 1-100  unexpected_answer  not queued: ${refusal}`);
      expect(lines[4]).toBe(
        `stopped: something other than the skyforge API answered (unexpected_answer: ${refusal}); lines 101 and after were not sent`,
      );

      const json = await run([...args, "--json"]);
      expect(json.code).toBe(4);
      expect(requests).toBe(2);
      const summary = JSON.parse(json.stdout) as Json;
      expect(summary).toMatchObject({
        lines: 100,
        enqueued: 0,
        stopped: {
          reason: "unavailable",
          notSentFrom: 101,
          error: { code: "unexpected_answer", status: 403, message: refusal },
        },
      });
      expect(summary.failed).toHaveLength(100);
      // A single command exits 4 for the same answer.
      const single = await run(["--endpoint", endpoint, "queues", "ls", "--json"]);
      expect(single.code).toBe(4);
      expect(JSON.parse(single.stderr).error).toMatchObject({ code: "unexpected_answer", status: 403 });
    } finally {
      await new Promise<void>((resolve) => gateway.close(() => resolve()));
    }
  });

  it("an endpoint that doesn't answer stops the run: exit 4, its lines failed, the rest not sent", async () => {
    const file = writeLines(
      "unanswered.jsonl",
      Array.from({ length: 250 }, (_, i) => JSON.stringify({ kind: "echo", payload: i })),
    );
    const port = await closedPort();
    const r = await run([
      "--endpoint",
      `http://127.0.0.1:${port}`,
      "enqueue",
      "--file",
      file,
      "--concurrency",
      "1",
    ]);
    expect(r.code).toBe(4);
    const lines = r.stdout.split("\n");
    expect(lines[0]).toBe(`enqueued 0, duplicate 0, failed 100 (100 lines from ${file})`);
    expect(lines[3]).toMatch(
      /^ {2}lines 1-100 +internal +the request carrying this job failed, .*ECONNREFUSED/,
    );
    expect(lines[4]).toMatch(
      /^stopped: the API could not be reached \(unreachable: .*\); lines 101 and after were not sent$/,
    );
  });

  it("Ctrl-C stops a bulk enqueue between requests: exit 130, and the summary says where to resume", async () => {
    const file = writeLines(
      "interrupted.jsonl",
      Array.from({ length: 3000 }, (_, i) => JSON.stringify({ kind: "echo", payload: { cut: i } })),
    );
    const p = cli.start(["enqueue", "--file", file, "--concurrency", "1", "--json"]);
    try {
      await waitFor(
        async () => p.stderr().includes("enqueue: 300/3000"),
        "the first tenth to be sent",
        30_000,
      );
      p.interrupt("group");
      expect(await p.exit()).toBe(130);
    } finally {
      p.kill();
    }
    const summary = JSON.parse(p.stdout()) as Json;
    const from = summary.stopped.notSentFrom as number;
    expect(summary.stopped.reason).toBe("interrupted");
    expect(from).toBeGreaterThan(300);
    expect(from).toBeLessThan(3000);
    // Every line before it is accounted for, none after it was sent.
    expect(summary).toMatchObject({ lines: from - 1, enqueued: from - 1, failed: [] });
    expect(summary.jobs.map((j: Json) => j.line)).toEqual(Array.from({ length: from - 1 }, (_, i) => i + 1));
  });

  it("enqueue --file with 10 000 lines: progress, summary, exit 0, and every job done", async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) =>
      JSON.stringify({ kind: "echo", payload: { bulk: i } }),
    );
    const file = writeLines("bulk.jsonl", lines);
    const started = Date.now();
    const bulk = await run(["enqueue", "--file", file, "--json"]);
    const enqueueSeconds = (Date.now() - started) / 1000;
    expect(bulk.code, bulk.stderr).toBe(0);
    const summary = JSON.parse(bulk.stdout) as Json;
    expect(summary).toMatchObject({ lines: 10_000, enqueued: 10_000, duplicate: 0, failed: [] });
    expect(summary.jobs).toHaveLength(10_000);
    expect(summary.jobs.map((j: Json) => j.line)).toEqual(Array.from({ length: 10_000 }, (_, i) => i + 1));
    // Not a terminal: a plain line at each tenth, on stderr.
    const progress = bulk.stderr.trim().split("\n");
    expect(progress).toHaveLength(10);
    progress.forEach((line, i) => {
      const n = (i + 1) * 1000;
      expect(line).toMatch(
        new RegExp(
          `^enqueue: ${n}/10000 lines \\(${(i + 1) * 10}%\\), ${n} enqueued, 0 duplicate, 0 failed, [\\d.]+ s$`,
        ),
      );
    });

    const ids = new Set<string>(summary.jobs.map((j: Json) => j.id));
    expect(ids.size).toBe(10_000);
    // Waits on the queue's counts (one cheap request), and reads every done job (a walk of the whole
    // table) only once the queue looks drained: a walk every poll would compete with the jobs for the CPU.
    await waitFor(
      async () => {
        if (!(await queueDrained("default"))) return undefined;
        const done = await idsWithStatus("done");
        return [...ids].every((id) => done.has(id)) || undefined;
      },
      "all 10 000 jobs to be done",
      180_000,
      1_000,
    );
    console.log(
      `bulk: 10 000 lines enqueued in ${enqueueSeconds.toFixed(1)} s, all done after ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    // Alone on two cores this takes about 40 s; beside the rest of the suite, about a minute.
  }, 360_000);
});

/** The queue holds no message: none visible, in flight or delayed (GET /queues's live counts). */
async function queueDrained(name: string): Promise<boolean> {
  const queues = (await call("GET", "/queues")).body.items as Json[];
  const counts = queues.find((q) => q.name === name)?.counts as Json | undefined;
  return counts !== undefined && counts.visible === 0 && counts.inFlight === 0 && counts.delayed === 0;
}

/** Every job id in `status`, walking GET /jobs to its end. */
async function idsWithStatus(status: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await call("GET", `/jobs?status=${status}&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    for (const job of page.body.items as Json[]) ids.add(job.id);
    cursor = page.body.cursor;
  } while (cursor);
  return ids;
}
