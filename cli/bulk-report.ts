import { type ErrorReport, type ExitCode, exitCodes } from "./exit-codes.ts";
import type { LineFailure } from "./jsonl.ts";
import { oneLine, table } from "./output.ts";

/** What `enqueue --file` did, line by line: the `--json` document, and what the summary is drawn from. */
export interface BulkSummary {
  file: string;
  /** Job lines read (blank lines are skipped and not counted). */
  lines: number;
  enqueued: number;
  duplicate: number;
  /** Every line that was not enqueued, in line order, with the API's code (or `invalid_json`). */
  failed: LineFailure[];
  /** Every enqueued line's job (a duplicate names the job that already had its unique key); --json only. */
  jobs: { line: number; id: string; duplicate: boolean }[];
  /**
   * Set when the run stopped before the end of the file: at Ctrl-C, or without a usable answer (the
   * API could not be reached or failed, or something in front of it refused the request). No line from `notSentFrom` on was sent, so `tail -n +N` of the file resumes it (absent
   * when every line was sent but a request went unanswered).
   */
  stopped?: { reason: "interrupted" | "unavailable"; notSentFrom?: number; error?: ErrorReport };
}

export function bulkExitCode(summary: BulkSummary): ExitCode {
  if (summary.stopped?.reason === "interrupted") return exitCodes.interrupted;
  if (summary.stopped?.reason === "unavailable") return exitCodes.unavailable;
  return summary.failed.length > 0 ? exitCodes.itemsFailed : exitCodes.ok;
}

export interface FailureRange {
  from: number;
  to: number;
  code: string;
  message: string;
}

/** Failures in line order, consecutive lines with the same error folded into one range. */
export function failureRanges(failures: readonly LineFailure[]): FailureRange[] {
  const ranges: FailureRange[] = [];
  for (const f of [...failures].sort((a, b) => a.line - b.line)) {
    const message = describe(f);
    const last = ranges.at(-1);
    if (last && last.to === f.line - 1 && last.code === f.code && last.message === message) last.to = f.line;
    else ranges.push({ from: f.line, to: f.line, code: f.code, message });
  }
  return ranges;
}

/** The API's message with its issues, which say which field was wrong. */
function describe(f: LineFailure): string {
  const issues = (f.issues ?? []).map((i) => `${i.path}: ${i.message}`).join("; ");
  return issues ? `${f.message} (${issues})` : f.message;
}

export function renderBulkSummary(s: BulkSummary): string {
  const out = [
    `enqueued ${s.enqueued}, duplicate ${s.duplicate}, failed ${s.failed.length} (${s.lines} lines from ${s.file})`,
  ];
  if (s.failed.length > 0) {
    const rows = failureRanges(s.failed).map((r) => [
      r.from === r.to ? `line ${r.from}` : `lines ${r.from}-${r.to}`,
      r.code,
      r.message,
    ]);
    out.push("failed lines:", indent(table(["LINE", "CODE", "ERROR"], rows)));
  }
  if (s.stopped) {
    const why = s.stopped.reason === "interrupted" ? "interrupted" : unavailable(s.stopped.error);
    const unsent = s.stopped.notSentFrom ? `; lines ${s.stopped.notSentFrom} and after were not sent` : "";
    out.push(`stopped: ${why}${unsent}`);
  }
  return out.join("\n");
}

/** Why a run stopped without an answer it could use: nothing answered, something else did, or the API failed. */
function unavailable(error: ErrorReport | undefined): string {
  const detail = error ? ` (${error.code}: ${oneLine(error.message)})` : "";
  if (error?.code === "unexpected_answer") return `something other than the skyforge API answered${detail}`;
  if (error?.status !== undefined) return `the API failed${detail}`;
  return `the API could not be reached${detail}`;
}

const indent = (text: string) =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
