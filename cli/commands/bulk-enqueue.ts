import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { apiErrorFrom, errorForAnswer, SkyforgeTransportError } from "../../client/errors.ts";
import type { ApiResponse, Transport } from "../../client/transport.ts";
import { type BulkSummary, bulkExitCode, renderBulkSummary } from "../bulk-report.ts";
import type { CommandContext } from "../context.ts";
import { type ErrorReport, type ExitCode, errorReport, UsageError } from "../exit-codes.ts";
import { type Batch, createBatcher, isBlank, type JobDefaults, parseJobLine } from "../jsonl.ts";
import { createProgress } from "../progress.ts";
import { clientFor } from "../target.ts";

export interface BulkOptions {
  /** A path, or "-" for stdin. */
  file: string;
  defaults: JobDefaults;
  /** Batch requests in flight at once. */
  concurrency: number;
  progress: boolean;
}

/**
 * `skyforge enqueue --file jobs.jsonl`: reads the file as a stream (any size), sends its jobs 100 per
 * POST /jobs/batch (client.enqueueMany) with a few requests in flight, and accounts for every line:
 * enqueued, duplicate, or failed with a code. A line the API refuses fails alone, and so do the
 * lines of a request it refused as a whole (413); a request the API never answered (unreachable,
 * 5xx) fails its lines (they may or may not have been queued) and stops the run, since every
 * further request would fail the same way. So does a request refused by something in front of the
 * API (API Gateway's 403 for credentials, a 429, a proxy's 413): its lines fail, none queued. Ctrl-C
 * stops the run too: requests in flight finish, nothing more is sent, and the summary says from
 * which line on nothing was sent.
 */
export async function bulkEnqueue(ctx: CommandContext, options: BulkOptions): Promise<ExitCode> {
  const fromStdin = options.file === "-";
  const total = fromStdin ? undefined : await countJobLines(options.file);
  const interrupted = ctx.stopOnInterrupt();
  const summary: BulkSummary = {
    file: fromStdin ? "stdin" : options.file,
    lines: 0,
    enqueued: 0,
    duplicate: 0,
    failed: [],
    jobs: [],
  };
  const progress = createProgress({ stream: process.stderr, total, enabled: options.progress });
  const report = () =>
    progress.update({
      done: summary.enqueued + summary.duplicate + summary.failed.length,
      enqueued: summary.enqueued,
      duplicate: summary.duplicate,
      failed: summary.failed.length,
    });

  let unavailable: ErrorReport | undefined;
  let notSentFrom: number | undefined;
  const stopping = () => interrupted.aborted || unavailable !== undefined;

  const send = async (batch: Batch): Promise<void> => {
    // The client turns a failed request into one error per job and goes on; watching its transport
    // tells a request the API refused (its own error answer: its jobs fail, the run goes on) from one
    // that stops the run, since every further request would end the same way.
    let stop: RequestStop | undefined;
    const watched: Transport = {
      send: async (request) => {
        try {
          const answer = await ctx.target.transport.send(request);
          stop ??= stopForAnswer(answer);
          return answer;
        } catch (err) {
          stop ??= stopForError(err);
          throw err;
        }
      },
    };
    const results = await clientFor({ ...ctx.target, transport: watched }).enqueueMany(batch.jobs as never);
    for (const r of results) {
      const line = batch.lines[r.index] as number;
      if (stop?.notQueued) {
        // The client's per-job error says "may or may not be queued": this answer says not queued.
        summary.failed.push({ line, code: stop.report.code, message: `not queued: ${stop.report.message}` });
      } else if (r.error) summary.failed.push({ line, ...r.error });
      else if (r.id) {
        // Only --json prints them: a person's summary of a huge file needn't hold every id.
        if (ctx.output.json) summary.jobs.push({ line, id: r.id, duplicate: r.duplicate === true });
        if (r.duplicate) summary.duplicate += 1;
        else summary.enqueued += 1;
      }
    }
    if (stop) unavailable ??= stop.report;
    report();
  };

  const inFlight = new Set<Promise<void>>();
  const dispatch = async (batch: Batch): Promise<void> => {
    while (inFlight.size >= options.concurrency) await Promise.race(inFlight);
    if (stopping()) {
      notSentFrom ??= batch.lines[0];
      return;
    }
    const request: Promise<void> = send(batch).finally(() => inFlight.delete(request));
    inFlight.add(request);
  };

  const batcher = createBatcher();
  let lineNumber = 0;
  try {
    for await (const text of readLines(fromStdin ? process.stdin : createReadStream(options.file))) {
      lineNumber += 1;
      if (stopping() || notSentFrom !== undefined) {
        // The batch being filled was never sent: the unsent part starts at its first line.
        notSentFrom ??= batcher.flush()?.lines[0] ?? lineNumber;
        break;
      }
      const parsed = parseJobLine(text, lineNumber, options.defaults);
      if (!parsed) continue;
      if ("failure" in parsed) {
        summary.failed.push(parsed.failure);
        report();
        continue;
      }
      for (const batch of batcher.add(parsed.line, parsed.job)) await dispatch(batch);
    }
    const last = batcher.flush();
    if (last) await dispatch(last);
  } finally {
    await Promise.all(inFlight);
    progress.stop();
  }

  if (notSentFrom !== undefined) {
    const from = notSentFrom;
    // Lines from there on are the next run's (`tail -n +N`): none of them is reported here.
    summary.failed = summary.failed.filter((f) => f.line < from);
    summary.stopped = {
      reason: interrupted.aborted ? "interrupted" : "unavailable",
      notSentFrom: from,
      ...(unavailable ? { error: unavailable } : {}),
    };
  } else if (unavailable) {
    // Every line was sent, but some request had no answer.
    summary.stopped = { reason: "unavailable", error: unavailable };
  }
  summary.failed.sort((a, b) => a.line - b.line);
  summary.jobs.sort((a, b) => a.line - b.line);
  summary.lines = summary.enqueued + summary.duplicate + summary.failed.length;
  ctx.output.result(summary, () => renderBulkSummary(summary));
  return bulkExitCode(summary);
}

function readLines(input: Readable): AsyncIterable<string> {
  return createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
}

/** Why a request stops the run, and whether its jobs are known not to be queued. */
interface RequestStop {
  report: ErrorReport;
  notQueued: boolean;
}

/**
 * An answer that stops the run: one that is not the API's (API Gateway's 403 {"message":"Forbidden"},
 * a 429 or 413 from in front of it; a 4xx of those means the request never reached the API), or a
 * 5xx (the API may have queued some jobs before failing). The API's own 4xx only fails its jobs.
 */
export function stopForAnswer(answer: ApiResponse): RequestStop | undefined {
  if (answer.status >= 200 && answer.status < 300) return undefined;
  const apiError = apiErrorFrom(answer.status, answer.body);
  if (apiError && answer.status < 500) return undefined;
  return {
    report: errorReport(apiError ?? errorForAnswer(answer.status, answer.body)),
    notQueued: !apiError && answer.status < 500,
  };
}

/** No answer (unreachable, a function error), or one the transport could not read (a proxy's HTML 403). */
export function stopForError(err: unknown): RequestStop {
  const status = err instanceof SkyforgeTransportError ? err.answer?.status : undefined;
  return { report: errorReport(err), notQueued: status !== undefined && status >= 400 && status < 500 };
}

/**
 * The job lines in a file (blank lines aside), for the progress bar's total; an unreadable file is a
 * usage error. Only a regular file is counted: a pipe, a FIFO or `<(jq …)` can be read once, so
 * counting it would leave nothing to send; its total stays unknown, as stdin's.
 */
export async function countJobLines(path: string): Promise<number | undefined> {
  try {
    if (!(await stat(path)).isFile()) return undefined;
    let count = 0;
    for await (const text of readLines(createReadStream(path))) if (!isBlank(text)) count += 1;
    return count;
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
}
