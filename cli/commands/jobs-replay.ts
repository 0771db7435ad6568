import { randomUUID } from "node:crypto";
import { Command, Option } from "commander";
import type { ReplayOptions } from "../../client/skyforge-client.ts";
import {
  type AppNames,
  MAX_REPLAY,
  MAX_REPLAY_IDS,
  type ReplayAnswer,
  replayableStatuses,
} from "../../client/vocabulary.ts";
import { action, type CommandContext } from "../context.ts";
import { exitCodes } from "../exit-codes.ts";
import { integer, jsonValue, timeOrAgo } from "../options.ts";
import { table } from "../output.ts";
import { createStepProgress } from "../progress.ts";

type Request = ReplayOptions<AppNames>;

interface ReplayCliOptions {
  status: (typeof replayableStatuses)[number];
  kind?: string;
  queue?: string;
  since?: string;
  until?: string;
  error?: string;
  limit?: number;
  /** JSON, as jsonValue parsed it. */
  payload?: NonNullable<Request["overrides"]>["payload"];
  toQueue?: string;
  maxAttempts?: number;
  dryRun?: boolean;
  requestId?: string;
}

/** What `jobs replay` prints with --json: the API's answer, with the request id it used. */
type ReplaySummary = ReplayAnswer & { requestId?: string; dryRun?: true };

/** Rows of `from → id` a person sees; --json lists every one. */
const SHOWN = 10;

/**
 * A run replays at most this many jobs (its `--limit`, and its bound without one): it holds every
 * match's id, and a request takes at most MAX_REPLAY of them, so the run walks the API's cursor.
 */
export const MAX_REPLAY_RUN = 100_000;

/**
 * `skyforge jobs replay`: POST /jobs/replay (docs/architecture.md §21). A dry run answers the
 * matches alone, walking the API's cursor (a request takes at most MAX_REPLAY jobs) up to
 * `--limit`. A real replay is that dry run first, to learn the matches, then the matched ids sent
 * back 100 at a time (`filter.ids`, with the rest of the filter and the same request id). Not the
 * filter again: jobs end while it runs, so a later request could match jobs the dry run did not
 * (replays of this very run that died of the same error among them). The ids are exactly what the
 * dry run counted, each chunk is one bounded request, and the progress bar counts chunks (shown
 * past 100 matches). The request id (a fresh one unless given, printed first) makes a repeat safe:
 * an interrupted or failed run, run again with it, answers the jobs already replayed and replays
 * only the rest.
 */
export function jobsReplayCommand(): Command {
  return new Command("replay")
    .description(
      "run ended jobs again as new jobs (POST /jobs/replay), by status and a filter; --dry-run counts them",
    )
    .addOption(
      new Option("--status <status>", "the status of the jobs to replay")
        .choices(replayableStatuses)
        .makeOptionMandatory(),
    )
    .option("--kind <kind>", "only jobs of this kind")
    .option("--queue <name>", "only jobs on this queue")
    .option(
      "--since <time>",
      "only jobs finished since: an ISO time, or a duration ago (30m, 1h, 2d)",
      timeOrAgo(),
    )
    .option("--until <time>", "only jobs finished before: an ISO time, or a duration ago", timeOrAgo())
    .option("--error <text>", "only jobs whose last error contains this text")
    .option(`--limit <n>`, `at most this many jobs, 1..${MAX_REPLAY_RUN}`, integer(1, MAX_REPLAY_RUN))
    .option("--payload <json>", "run the replays with this payload instead of their own", jsonValue)
    .option("--to-queue <name>", "run the replays on this queue instead of their own")
    .option("--max-attempts <n>", "the replays' attempts instead of their own", integer(1, 100))
    .option("--dry-run", "only count and list the matches; replay nothing")
    .option(
      "--request-id <id>",
      "repeat a replay safely: the same id again replays nothing twice (default: a fresh one, printed)",
    )
    .action(action<[], ReplayCliOptions>(async (ctx, o) => replay(ctx, o)));
}

async function replay(ctx: CommandContext, o: ReplayCliOptions) {
  const { client, output } = ctx;
  const filter: Request["filter"] = {
    status: o.status,
    ...(o.kind !== undefined ? { kind: o.kind } : {}),
    ...(o.queue !== undefined ? { queue: o.queue } : {}),
    ...(o.since !== undefined ? { finishedAfter: o.since } : {}),
    ...(o.until !== undefined ? { finishedBefore: o.until } : {}),
    ...(o.error !== undefined ? { errorContains: o.error } : {}),
  };
  const overrides: NonNullable<Request["overrides"]> = {
    ...(o.payload !== undefined ? { payload: o.payload } : {}),
    ...(o.toQueue !== undefined ? { queue: o.toQueue } : {}),
    ...(o.maxAttempts !== undefined ? { maxAttempts: o.maxAttempts } : {}),
  };
  const withOverrides = Object.keys(overrides).length > 0 ? { overrides } : {};
  const dry = await matches(ctx, { filter, ...withOverrides, dryRun: true }, o.limit);
  if (o.dryRun) {
    output.result({ ...dry, dryRun: true } satisfies ReplaySummary, () => humanSummary(dry, true));
    return undefined;
  }
  const requestId = o.requestId ?? `replay-${randomUUID()}`;
  if (dry.matched === 0) {
    output.result({ ...dry, requestId } satisfies ReplaySummary, () => humanSummary(dry, false));
    return undefined;
  }
  if (o.requestId === undefined) {
    output.note(`request id ${requestId}: run again with --request-id ${requestId} to replay nothing twice`);
  }
  const ids = dry.jobs.map((j) => j.from);
  const interrupted = ctx.stopOnInterrupt();
  const progress = createStepProgress({
    stream: process.stderr,
    total: ids.length,
    label: "replay",
    enabled: ids.length > 100,
  });
  const done: ReplayAnswer = { matched: 0, replayed: 0, jobs: [] };
  let sent = 0;
  try {
    while (sent < ids.length && !interrupted.aborted) {
      const chunk = ids.slice(sent, sent + MAX_REPLAY_IDS);
      const answer = await client.replay({ filter: { ...filter, ids: chunk }, ...withOverrides, requestId });
      sent += chunk.length;
      done.matched += answer.matched;
      done.replayed += answer.replayed;
      done.jobs.push(...answer.jobs);
      progress.update(sent, `${done.replayed} replayed`);
    }
  } catch (err) {
    progress.stop();
    if (done.replayed > 0) {
      output.note(
        `${done.replayed} of ${ids.length} replayed before the error: --request-id ${requestId} resumes without replaying them twice`,
      );
    }
    throw err;
  }
  progress.stop();
  output.result({ ...done, requestId } satisfies ReplaySummary, () => {
    const lines = [humanSummary(done, false)];
    if (done.matched < sent)
      lines.push(`${sent - done.matched} of the dry run's matches no longer matched (they changed since)`);
    if (interrupted.aborted)
      lines.push(`stopped at Ctrl-C after ${sent} of ${ids.length}: --request-id ${requestId} resumes`);
    lines.push(`request id ${requestId}`);
    return lines.join("\n");
  });
  return interrupted.aborted ? exitCodes.interrupted : undefined;
}

/**
 * The dry run's matches, request after request along the API's cursor, up to `limit` (each request
 * asks for what is still wanted, at most MAX_REPLAY) or MAX_REPLAY_RUN without one. A run stopped
 * there with more to match says so.
 */
async function matches(
  ctx: CommandContext,
  request: Request,
  limit: number | undefined,
): Promise<ReplayAnswer> {
  const total = limit ?? MAX_REPLAY_RUN;
  const found: ReplayAnswer = { matched: 0, replayed: 0, jobs: [] };
  let cursor: string | undefined;
  do {
    const wanted = Math.min(MAX_REPLAY, total - found.matched);
    const answer = await ctx.client.replay({
      ...request,
      ...(limit !== undefined ? { limit: wanted } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    });
    found.jobs.push(...answer.jobs.slice(0, total - found.matched));
    found.matched = found.jobs.length;
    cursor = answer.cursor;
  } while (cursor !== undefined && found.matched < total);
  if (cursor !== undefined && limit === undefined)
    ctx.output.note(
      `stopped at ${MAX_REPLAY_RUN} matches, a run's most: narrow the filter, or run again once these are replayed`,
    );
  return found;
}

function humanSummary(answer: ReplayAnswer, dryRun: boolean): string {
  if (answer.matched === 0) return "no jobs match";
  const head = dryRun
    ? `dry run: ${answer.matched} jobs match; nothing replayed`
    : `replayed ${answer.replayed} of ${answer.matched} matched`;
  const shown = answer.jobs.slice(0, SHOWN);
  const rows = dryRun ? shown.map((j) => [j.from]) : shown.map((j) => [j.from, "→", j.id]);
  const more =
    answer.jobs.length > SHOWN ? `\n… and ${answer.jobs.length - SHOWN} more (--json lists every one)` : "";
  return `${head}\n${table(dryRun ? ["JOB"] : ["FROM", "", "NEW JOB"], rows)}${more}`;
}
