import { describe, expect, it } from "vitest";
import { bulkExitCode, failureRanges, renderBulkSummary } from "../../cli/bulk-report.ts";
import { createBatcher, parseJobLine } from "../../cli/jsonl.ts";

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

describe("createBatcher: requests of at most 100 jobs and a byte budget", () => {
  const job = (n: number, size = 0) => ({ kind: "echo", payload: "x".repeat(size), n });

  it("closes a batch at maxItems and flushes the rest, lines in order", () => {
    const batcher = createBatcher({ maxItems: 100, maxBytes: 1_000_000 });
    const closed = [];
    for (let line = 1; line <= 250; line++) closed.push(...batcher.add(line, job(line)));
    closed.push(batcher.flush());
    expect(closed.map((b) => b?.lines.length)).toEqual([100, 100, 50]);
    expect(closed.flatMap((b) => b?.lines)).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
    expect(batcher.flush()).toBeUndefined();
  });

  it("closes a batch before the job that would take it over maxBytes; a job larger than that goes alone", () => {
    const batcher = createBatcher({ maxItems: 100, maxBytes: 1000 });
    expect(batcher.add(1, job(1, 400))).toEqual([]);
    expect(batcher.add(2, job(2, 400))).toEqual([]);
    const [first] = batcher.add(3, job(3, 400));
    expect(first?.lines).toEqual([1, 2]);
    expect(first?.bytes).toBeLessThanOrEqual(1000);
    const [second] = batcher.add(4, job(4, 5000));
    expect(second?.lines).toEqual([3]);
    const [third] = batcher.add(5, job(5, 10));
    expect(third?.lines).toEqual([4]);
    expect(batcher.flush()?.lines).toEqual([5]);
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
