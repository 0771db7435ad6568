import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { renderBulkSummary } from "../../cli/bulk-report.ts";
import { jobDetail } from "../../cli/commands/jobs.ts";
import { createOutput, keyValues, oneLine, table, terminalText } from "../../cli/output.ts";
import { renderChange } from "../../cli/tail-changes.ts";
import type { JobView } from "../../client/vocabulary.ts";

/** Text a job's producer or the API chose, with what a terminal would obey in it. */
const hostile = "boom\u001b[2J\u001b]0;pwned\u0007\r\nnext\tline\u009b31m\u007f";
/** The same, shown: ESC, BEL and CR as control pictures, the line break as ↵, tab as a space, C1 as �. */
const shownOnOneLine = "boom␛[2J␛]0;pwned␇↵next line\ufffd31m␡";

function captured(json: boolean) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const read = (s: PassThrough) => () => (s.read() as Buffer | null)?.toString() ?? "";
  return { output: createOutput(json, { stdout, stderr }), stdout: read(stdout), stderr: read(stderr) };
}

describe("bidi controls, which reorder what a terminal shows (Trojan Source)", () => {
  const bidi = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"];

  it("are shown as their code points, in text and on one line", () => {
    expect(terminalText(bidi.join(""))).toBe(
      "<U+202A><U+202B><U+202C><U+202D><U+202E><U+2066><U+2067><U+2068><U+2069>",
    );
    // "done" that a terminal would show reversed, as "enod", after the override.
    expect(oneLine("status \u202eenod\u202c ok")).toBe("status <U+202E>enod<U+202C> ok");
    // Neighbours that are not controls stay as they are: LRM, ZWJ, Arabic and Hebrew letters.
    expect(terminalText("\u200e\u200d\u0627\u05d0\u2029x")).toBe("\u200e\u200d\u0627\u05d0\u2029x");
  });

  it("reach neither stdout nor stderr raw, as a person's text or as --json", () => {
    const error = { code: "validation_error", message: "bad \u2067kind\u2069" };
    for (const json of [false, true]) {
      const c = captured(json);
      c.output.result({ id: "a\u202eb", text: "\u009b31m" }, () => "a\u202eb");
      c.output.line({ kind: "k\u2066" }, () => "k\u2066");
      c.output.note("note \u202d");
      c.output.error(error);
      const [stdout, stderr] = [c.stdout(), c.stderr()];
      expect(stdout + stderr, json ? "--json" : "text").not.toMatch(
        /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/,
      );
      if (json) {
        const [result, line] = stdout
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l));
        expect(result).toEqual({ id: "a\u202eb", text: "\u009b31m" }); // the same values, escaped
        expect(line).toEqual({ kind: "k\u2066" });
        expect(stdout).toContain("a\\u202eb");
        expect(JSON.parse(stderr.trim().split("\n").at(-1) ?? "")).toEqual({ error });
      }
    }
  });
});

describe("human output shows control characters instead of letting a terminal obey them", () => {
  it("oneLine folds line breaks into ↵; terminalText keeps them", () => {
    expect(oneLine(hostile)).toBe(shownOnOneLine);
    expect(terminalText(hostile)).toBe("boom␛[2J␛]0;pwned␇␍\nnext line\ufffd31m␡");
    expect(terminalText("plain → text, ünïcode\n")).toBe("plain → text, ünïcode\n");
  });

  it("in table cells and key-value rows, one line each", () => {
    expect(table(["ID", "ERROR"], [["a", hostile]]).split("\n")).toEqual([
      `ID${" ".repeat(2)}ERROR`,
      `a   ${shownOnOneLine}`,
    ]);
    expect(keyValues([["last error", hostile]])).toBe(`last error  ${shownOnOneLine}`);
  });

  it("in jobs get, tail lines and the bulk summary", () => {
    const job: JobView = {
      id: "01K",
      kind: "echo",
      queue: "default",
      status: "dead",
      attempts: 3,
      maxAttempts: 3,
      payload: { text: "\u009b2J" },
      uniqueKey: "k\u001b[31m",
      lastError: hostile,
      createdAt: "2026-01-01T10:00:00.000Z",
      runAt: "2026-01-01T10:00:00.000Z",
    };
    const detail = jobDetail(job);
    expect(detail).toContain(`\nunique key  k␛[31m\n`);
    expect(detail).toContain(`\nlast error  ${shownOnOneLine}\n`);
    // JSON.stringify escapes C0 in a payload, but not C1.
    expect(detail).toContain('\npayload     {"text":"\ufffd2J"}\n');

    const line = renderChange({
      time: "2026-01-01T10:00:03.000Z",
      id: "01K",
      kind: "echo\u001b[8m",
      queue: "default",
      from: "running",
      to: "dead",
      attempts: 3,
      maxAttempts: 3,
      lastError: hostile,
    });
    expect(line).toBe(`10:00:03Z  01K  echo␛[8m  default  running → dead  (attempt 3/3)  ${shownOnOneLine}`);

    const summary = renderBulkSummary({
      file: "jobs.jsonl",
      lines: 1,
      enqueued: 0,
      duplicate: 0,
      failed: [{ line: 1, code: "validation_error", message: hostile }],
      jobs: [],
      stopped: { reason: "unavailable", error: { code: "unexpected_answer", message: hostile, status: 403 } },
    });
    expect(summary.split("\n")).toEqual([
      "enqueued 0, duplicate 0, failed 1 (1 lines from jobs.jsonl)",
      "failed lines:",
      "  LINE    CODE              ERROR",
      `  line 1  validation_error  ${shownOnOneLine}`,
      `stopped: something other than the skyforge API answered (unexpected_answer: ${shownOnOneLine})`,
    ]);
  });

  it("in whatever a command writes for a person (results, notes, errors); --json stays exact", () => {
    const human = captured(false);
    human.output.result({ uniqueKey: hostile }, () => `duplicate: unique key ${hostile}`);
    human.output.note(`tail: ${hostile}`);
    human.output.error({
      code: "conflict",
      message: hostile,
      status: 409,
      issues: [{ path: "a\u001b", message: hostile }],
    });
    expect(human.stdout()).toBe(`duplicate: unique key ${terminalText(hostile)}\n`);
    expect(human.stderr()).toBe(
      `tail: ${terminalText(hostile)}\nerror: conflict (HTTP 409): ${shownOnOneLine}\n  a␛: ${shownOnOneLine}\n`,
    );
    const written = [...(human.stdout() + human.stderr())].map((c) => c.charCodeAt(0));
    expect(written.filter((c) => (c < 0x20 && c !== 0x0a) || (c >= 0x7f && c <= 0x9f))).toEqual([]);

    const json = captured(true);
    json.output.result({ uniqueKey: hostile }, () => "unused");
    json.output.line({ lastError: hostile }, () => "unused");
    json.output.error({ code: "conflict", message: hostile });
    const [result, line] = json
      .stdout()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(result).toEqual({ uniqueKey: hostile });
    expect(line).toEqual({ lastError: hostile });
    expect(JSON.parse(json.stderr())).toEqual({ error: { code: "conflict", message: hostile } });
  });
});
