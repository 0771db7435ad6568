import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bulkExitCode, failureRanges, renderBulkSummary } from "../../cli/bulk-report.ts";
import { countJobLines, stopForAnswer, stopForError } from "../../cli/commands/bulk-enqueue.ts";
import { UsageError } from "../../cli/exit-codes.ts";
import { type Batch, createBatcher, parseJobLine } from "../../cli/jsonl.ts";
import { batchesOf, MAX_BATCH_BODY_BYTES } from "../../client/enqueue-many.ts";
import { SkyforgeTransportError } from "../../client/errors.ts";
import { MAX_BATCH } from "../../client/vocabulary.ts";

describe("parseJobLine: one line of enqueue --file", () => {
  it("takes an object with a string kind as the request, untouched", () => {
    expect(parseJobLine('{"kind":"echo","payload":{"a":[1,2]},"uniqueKey":"k"}', 4)).toEqual({
      line: 4,
      job: { kind: "echo", payload: { a: [1, 2] }, uniqueKey: "k" },
    });
  });

  it("skips blank lines, and a UTF-8 byte-order mark on the first line", () => {
    expect(parseJobLine("", 1)).toBeUndefined();
    expect(parseJobLine("  \t ", 2)).toBeUndefined();
    expect(parseJobLine('\uFEFF{"kind":"echo"}', 1)).toEqual({ line: 1, job: { kind: "echo" } });
  });

  it("refuses a line that is not JSON as invalid_json, with the parser's reason", () => {
    const parsed = parseJobLine("{kind: echo}", 7);
    expect(parsed).toMatchObject({ line: 7, failure: { line: 7, code: "invalid_json" } });
    expect(parsed && "failure" in parsed && parsed.failure.message).toMatch(/^not JSON: /);
  });

  it.each([
    ["[1,2]", /got an array/],
    ["42", /got 42/],
    ["null", /got null/],
    ['"echo"', /got "echo"/],
    ['{"payload":1}', /"kind" is missing/],
    ['{"kind":7}', /"kind" must be a string, got 7/],
  ])("refuses %s as validation_error, saying why", (text, why) => {
    const parsed = parseJobLine(text, 3);
    expect(parsed).toMatchObject({ failure: { line: 3, code: "validation_error" } });
    expect(parsed && "failure" in parsed && parsed.failure.message).toMatch(why);
  });

  it("leaves unknown kinds, bad payloads and unknown fields to the API", () => {
    expect(parseJobLine('{"kind":"nope","payload":{"ms":"x"},"bogus":1}', 1)).toEqual({
      line: 1,
      job: { kind: "nope", payload: { ms: "x" }, bogus: 1 },
    });
  });

  it("applies the command line's defaults only where the line sets nothing", () => {
    const defaults = { queue: "heavy", delaySeconds: 30, priority: "critical" as const, maxAttempts: 2 };
    expect(parseJobLine('{"kind":"echo"}', 1, defaults)).toEqual({
      line: 1,
      job: { kind: "echo", queue: "heavy", delaySeconds: 30, priority: "critical", maxAttempts: 2 },
    });
    // The line's own runAt wins over --delay: the API refuses both at once.
    expect(
      parseJobLine(
        '{"kind":"echo","queue":"default","runAt":"2030-01-01T00:00:00Z","maxAttempts":5}',
        1,
        defaults,
      ),
    ).toEqual({
      line: 1,
      job: {
        kind: "echo",
        queue: "default",
        runAt: "2030-01-01T00:00:00Z",
        priority: "critical",
        maxAttempts: 5,
      },
    });
  });
});

describe("createBatcher: the client's requests, as the lines stream in", () => {
  const job = (n: number, size = 0) => ({ kind: "echo", payload: "x".repeat(size), n });
  const lines = (...batches: (Batch | undefined)[]) => batches.map((b) => b?.lines);

  it("closes a batch at MAX_BATCH jobs and flushes the rest, lines in order", () => {
    const batcher = createBatcher();
    const closed: (Batch | undefined)[] = [];
    for (let line = 1; line <= 250; line++) closed.push(...batcher.add(line, job(line)));
    closed.push(batcher.flush());
    expect(closed.map((b) => b?.lines.length)).toEqual([MAX_BATCH, MAX_BATCH, 50]);
    expect(closed.flatMap((b) => b?.lines)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(batcher.flush()).toBeUndefined();
  });

  it("closes a batch before the job that would take its body over the client's bound; a larger job goes alone", () => {
    const third = Math.floor(MAX_BATCH_BODY_BYTES / 3);
    const batcher = createBatcher();
    expect(batcher.add(1, job(1, third))).toEqual([]);
    expect(batcher.add(2, job(2, third))).toEqual([]);
    const closed = batcher.add(3, job(3, third));
    expect(lines(...closed)).toEqual([[1, 2]]);
    expect(Buffer.byteLength(JSON.stringify({ jobs: closed[0]?.jobs }))).toBeLessThan(MAX_BATCH_BODY_BYTES);
    expect(lines(...batcher.add(4, job(4, MAX_BATCH_BODY_BYTES)))).toEqual([[3]]);
    expect(lines(...batcher.add(5, job(5, 10)))).toEqual([[4]]);
    expect(batcher.flush()?.lines).toEqual([5]);
  });

  it("makes the requests client.enqueueMany would make of the same jobs", () => {
    const jobs = Array.from({ length: 230 }, (_, i) => job(i, i % 7 === 0 ? 400_000 : 10));
    const batcher = createBatcher();
    const closed = jobs.flatMap((j, i) => batcher.add(i + 1, j));
    const mine = [...closed, batcher.flush()].map((b) => b?.jobs);
    const clients = batchesOf(jobs.map((j) => ({ j, bytes: Buffer.byteLength(JSON.stringify(j)) }))).map(
      (b) => b.map((p) => p.j),
    );
    expect(mine).toEqual(clients);
  });
});

describe("countJobLines: the progress bar's total", () => {
  const dir = mkdtempSync(join(tmpdir(), "skyforge-cli-count-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("counts a regular file's job lines, blank lines aside", async () => {
    const file = join(dir, "jobs.jsonl");
    writeFileSync(file, '{"kind":"echo"}\n\n  \n{"kind":"echo"}\n');
    expect(await countJobLines(file)).toBe(2);
  });

  it("leaves a FIFO (a pipe, `<(jq …)`) uncounted, unopened: it can be read only once, by the run", async () => {
    const fifo = join(dir, "jobs.fifo");
    execFileSync("mkfifo", [fifo]);
    // Opening it would wait for a writer: counting must not even open it.
    expect(await countJobLines(fifo)).toBeUndefined();
  });

  it("makes an unreadable path a usage error", async () => {
    await expect(countJobLines(join(dir, "missing.jsonl"))).rejects.toThrow(
      /^cannot read .*missing\.jsonl: ENOENT/,
    );
    await expect(countJobLines(join(dir, "missing.jsonl"))).rejects.toBeInstanceOf(UsageError);
  });
});

describe("which answers stop a bulk run", () => {
  const answer = (status: number, body: unknown) => stopForAnswer({ status, headers: {}, body });

  it("goes on after a success or the API's own refusal: those lines' results say what happened", () => {
    expect(answer(200, { results: [] })).toBeUndefined();
    expect(answer(413, { error: { code: "payload_too_large", message: "too large" } })).toBeUndefined();
  });

  it("stops at a refusal from in front of the API, its jobs known not queued", () => {
    expect(answer(403, { message: "Forbidden" })).toEqual({
      notQueued: true,
      report: {
        code: "unexpected_answer",
        status: 403,
        message: `HTTP 403 that is not the skyforge API's answer: {"message":"Forbidden"}`,
      },
    });
    expect(answer(429, { message: "Too Many Requests" })).toMatchObject({ notQueued: true });
    const page = new SkyforgeTransportError("HTTP 413 with a body that is not JSON: <html>", {
      status: 413,
      body: "<html>",
    });
    expect(stopForError(page)).toMatchObject({ notQueued: true, report: { code: "unexpected_answer" } });
  });

  it("stops at a 5xx or no answer, its jobs maybe queued", () => {
    expect(answer(500, { error: { code: "internal", message: "internal error" } })).toEqual({
      notQueued: false,
      report: { code: "internal", message: "internal error", status: 500 },
    });
    expect(answer(504, { message: "Endpoint request timed out" })).toMatchObject({
      notQueued: false,
      report: { code: "unexpected_answer", status: 504 },
    });
    expect(stopForError(new SkyforgeTransportError("no answer"))).toMatchObject({
      notQueued: false,
      report: { code: "unreachable" },
    });
    // The function ran and failed: it may have queued some.
    const failed = new SkyforgeTransportError("the API function failed", { status: 200, body: {} });
    expect(stopForError(failed)).toMatchObject({ notQueued: false });
  });
});

describe("the bulk summary", () => {
  const failures = [
    { line: 9, code: "unknown_kind", message: 'unknown kind "nope"' },
    { line: 3, code: "invalid_json", message: "not JSON: x" },
    { line: 4, code: "invalid_json", message: "not JSON: x" },
    { line: 5, code: "invalid_json", message: "not JSON: x" },
    {
      line: 6,
      code: "validation_error",
      message: 'payload does not match kind "sleep"',
      issues: [{ path: "payload.ms", message: "expected number" }],
    },
  ];

  it("folds consecutive lines with the same error into a range, in line order", () => {
    expect(failureRanges(failures)).toEqual([
      { from: 3, to: 5, code: "invalid_json", message: "not JSON: x" },
      {
        from: 6,
        to: 6,
        code: "validation_error",
        message: 'payload does not match kind "sleep" (payload.ms: expected number)',
      },
      { from: 9, to: 9, code: "unknown_kind", message: 'unknown kind "nope"' },
    ]);
  });

  it("exits 0 when every line went in, 1 when a line failed, 4 when the API went away, 130 at Ctrl-C", () => {
    const base = { file: "f", lines: 10, enqueued: 10, duplicate: 0, failed: [], jobs: [] };
    expect(bulkExitCode(base)).toBe(0);
    expect(bulkExitCode({ ...base, failed: failures })).toBe(1);
    expect(bulkExitCode({ ...base, stopped: { reason: "unavailable", notSentFrom: 5 } })).toBe(4);
    expect(
      bulkExitCode({ ...base, failed: failures, stopped: { reason: "interrupted", notSentFrom: 5 } }),
    ).toBe(130);
  });

  it("prints counts, then each failed line or range with its code", () => {
    const text = renderBulkSummary({
      file: "jobs.jsonl",
      lines: 12,
      enqueued: 6,
      duplicate: 1,
      failed: failures,
      jobs: [],
      stopped: { reason: "interrupted", notSentFrom: 13 },
    });
    expect(text.split("\n")).toEqual([
      "enqueued 6, duplicate 1, failed 5 (12 lines from jobs.jsonl)",
      "failed lines:",
      "  LINE       CODE              ERROR",
      "  lines 3-5  invalid_json      not JSON: x",
      '  line 6     validation_error  payload does not match kind "sleep" (payload.ms: expected number)',
      '  line 9     unknown_kind      unknown kind "nope"',
      "stopped: interrupted; lines 13 and after were not sent",
    ]);
  });
});
