import * as z from "zod";
import { UsageError } from "../errors.ts";
import { type JobSteps, type StepView, stepTypes, type TokenView } from "./durable.ts";
import type { JobView } from "./schemas.ts";
import { isTerminal } from "./status.ts";

/**
 * A recorded journal fixture (docs/guide/durable-jobs.md, "Changing a durable kind safely"): one
 * finished or suspended durable job's journal as a file in the user's project
 * (`durable-fixtures/<kind>/<name>.json`, written by `skyforge durable fixture <jobId>`), which
 * `check-deploy` replays offline against the kind's handler as it now stands, as Temporal's replay
 * tests replay a recorded history. It holds what the job's API answers show (GET /jobs/{id},
 * /jobs/{id}/steps, /tokens/{id}): never a token's secret.
 */

/** The file's format: a reader meeting another refuses the file, naming both. */
export const JOURNAL_FIXTURE_FORMAT = 1;

const json: z.ZodType<unknown> = z.json();

/** One recorded call, in the handler's order. */
export const FixtureOp = z.strictObject({
  name: z.string().min(1),
  op: z.enum(stepTypes),
  /** Its place among the handler's calls; absent for a record made before journal checks. */
  place: z.number().int().min(0).optional(),
  status: z.enum(["done", "sleeping", "waiting", "timed-out"]),
  /** Its result as recorded: a step's value, a token step's token, an event's data, a child's end. */
  result: json.optional(),
  /** A race's winning branch. */
  won: z.string().optional(),
  /** A child step's job id. */
  child: z.string().optional(),
});
export type FixtureOp = z.infer<typeof FixtureOp>;

export const JournalFixture = z.strictObject({
  format: z.literal(JOURNAL_FIXTURE_FORMAT),
  kind: z.string().min(1),
  /** The kind's version that started the job's journal; absent for a journal older than versions. */
  version: z.string().optional(),
  jobId: z.string().min(1),
  /** The job's status when recorded: a suspended job is `scheduled` and waits on its last op. */
  status: z.string(),
  recordedAt: z.iso.datetime(),
  payload: json,
  ops: z.array(FixtureOp),
  /** Each completed token's data (what waitForToken returned), by token id. */
  tokens: z.record(z.string(), json).optional(),
});
export type JournalFixture = z.infer<typeof JournalFixture>;

/** Why a job's journal can't be a fixture now, or undefined when it can: finished, or suspended. */
export function fixtureProblem(
  job: Pick<JobView, "id" | "status" | "waiting">,
  steps: JobSteps,
): string | undefined {
  const settled = isTerminal(job.status) || job.status === "paused" || job.waiting !== undefined;
  if (!settled)
    return `job ${job.id} is ${job.status}: record a fixture of a job that has ended or is suspended in a wait`;
  if (steps.steps.length === 0)
    return `job ${job.id} has no recorded steps: it is not a durable job's journal`;
  return undefined;
}

/** A token step's token without its url's secret: a fixture is a file kept with the code. */
function withoutSecret(result: unknown): unknown {
  const token = result as { id?: unknown; url?: unknown } | null;
  if (typeof token?.url !== "string") return result;
  return { ...token, url: token.url.replace(/([?&]secret=)[^&#]*/, "$1removed") };
}

function opOf(s: StepView): FixtureOp {
  return {
    name: s.name,
    op: s.type,
    ...(s.place !== undefined ? { place: s.place } : {}),
    status: s.status,
    ...(s.result !== undefined ? { result: s.type === "token" ? withoutSecret(s.result) : s.result } : {}),
    ...(s.won !== undefined ? { won: s.won } : {}),
    ...(s.child !== undefined ? { child: s.child } : {}),
  };
}

/**
 * The fixture of a job as its API answers show it: the job, its steps, and its completed tokens.
 * Throws UsageError with fixtureProblem's text when the job can't be one.
 */
export function journalFixture(
  job: JobView,
  steps: JobSteps,
  tokens: readonly TokenView[],
  recordedAt: Date,
): JournalFixture {
  const problem = fixtureProblem(job, steps);
  if (problem) throw new UsageError(problem);
  const completed = tokens.filter((t) => t.status === "completed");
  return {
    format: JOURNAL_FIXTURE_FORMAT,
    kind: job.kind,
    ...(job.version !== undefined ? { version: job.version } : {}),
    jobId: job.id,
    status: job.status,
    recordedAt: recordedAt.toISOString(),
    payload: job.payload,
    ops: steps.steps.map(opOf),
    ...(completed.length > 0
      ? { tokens: Object.fromEntries(completed.map((t) => [t.id, t.data ?? null])) }
      : {}),
  };
}

/** The token ids a job's token steps made: those whose state a fixture records. */
export const tokenIdsOf = (steps: JobSteps): string[] =>
  steps.steps.flatMap((s) => {
    const id = s.type === "token" ? (s.result as { id?: unknown } | undefined)?.id : undefined;
    return typeof id === "string" ? [id] : [];
  });

/** A fixture file's text parsed, or the reasons it is not one (each naming the field). */
export function parseJournalFixture(text: string): { fixture: JournalFixture } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problem: `not JSON (${(err as Error).message})` };
  }
  const format = (value as { format?: unknown } | null)?.format;
  if (format !== JOURNAL_FIXTURE_FORMAT)
    return {
      problem: `format ${String(format)}: this skyforge reads journal fixtures of format ${JOURNAL_FIXTURE_FORMAT}`,
    };
  const parsed = JournalFixture.safeParse(value);
  if (parsed.success) return { fixture: parsed.data };
  return {
    problem: parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; "),
  };
}
