import { givesAttemptBack } from "./format.js";

/**
 * A job's timeline from its own records (docs/architecture.md §23), no collector: when it was
 * enqueued and due, each attempt (from its history when the API gives one, else from its timings),
 * its durable steps and wait, the groups it belongs to or made, and its end. Pure: the page renders
 * what this returns (job-timeline.js), and unit tests call it directly.
 */

/**
 * @typedef {{ at: string, what: "enqueued" | "due" | "attempt" | "ended" | "step" | "waiting" | "group" | "finished",
 *   title: string, detail?: string, tone?: "ok" | "bad" | "wait", ms?: number }} TimelineEntry
 */

/** @param {string | undefined} a @param {string | undefined} b */
const gap = (a, b) => (a && b ? Date.parse(b) - Date.parse(a) : undefined);

const failed = new Set(["dead", "failed", "retry", "lapsed", "paused", "cancelled"]);

/**
 * @param {string} outcome
 * @returns {"ok" | "bad" | "wait"}
 */
const toneOf = (outcome) =>
  outcome === "done" || outcome === "succeeded" ? "ok" : failed.has(outcome) ? "bad" : "wait";

/**
 * @param {import("./api-shapes").Job} job
 * @param {{ steps?: import("./api-shapes").Step[], groups?: import("./api-shapes").Group[] }} [more]
 *   the job's steps (GET /jobs/{id}/steps) and its groups (GET /groups/{id}), when the page has them
 * @returns {TimelineEntry[]} oldest first
 */
export function timelineOf(job, more = {}) {
  /** @type {TimelineEntry[]} */
  const out = [];
  out.push({
    at: job.createdAt,
    what: "enqueued",
    title: "enqueued",
    ...(job.traceparent ? { detail: `trace ${job.traceparent.split("-")[1]}` } : {}),
  });
  const delay = gap(job.createdAt, job.runAt);
  if (job.runAt && delay !== undefined && delay > 0)
    out.push({
      at: job.runAt,
      what: "due",
      title: "due",
      detail: "after its delay",
      ms: delay,
      tone: "wait",
    });
  if (job.group) out.push({ at: job.createdAt, what: "group", title: `child of group ${job.group}` });
  const history = job.history ?? [];
  if (history.length > 0) {
    for (const a of history) {
      const ran = gap(a.startedAt, a.endedAt);
      // A run that gave its attempt back was no attempt: the job's count leaves it out too.
      const given = givesAttemptBack.has(a.outcome);
      out.push({
        at: a.startedAt,
        what: "attempt",
        title: given ? `${a.outcome}: attempt given back` : `attempt ${a.attempt}: ${a.outcome}`,
        tone: toneOf(a.outcome),
        ...(ran !== undefined ? { ms: ran } : {}),
        ...(a.error || a.runner
          ? { detail: [a.error, a.runner && `on ${a.runner}`].filter(Boolean).join(" · ") }
          : {}),
      });
    }
  } else if (job.startedAt) {
    // No history (an API before it, or a first attempt that succeeded): the last attempt's timings.
    const ran = gap(job.startedAt, job.finishedAt);
    out.push({
      at: job.startedAt,
      what: "attempt",
      title: `attempt ${job.attempts}${job.status === "running" ? ": running" : ""}`,
      ...(ran !== undefined ? { ms: ran } : {}),
      ...(job.status === "running" ? { tone: "wait" } : {}),
    });
  }
  for (const s of more.steps ?? []) {
    out.push({
      at: s.at,
      what: "step",
      title: `${s.type} ${s.name}: ${s.status}`,
      ...(s.until ? { detail: `until ${s.until}` } : {}),
      tone: s.status === "done" || s.status === "completed" ? "ok" : "wait",
    });
  }
  for (const g of more.groups ?? []) {
    const c = g.counts;
    const role = g.id === job.completes ? "completes group" : "made group";
    out.push({
      at: g.createdAt ?? job.startedAt ?? job.createdAt,
      what: "group",
      title: `${role} ${g.id}: ${g.status}`,
      detail: c
        ? `${c.total} children: ${c.done} done, ${c.dead} dead, ${c.cancelled} cancelled, ${c.pending} pending`
        : "",
      tone: toneOf(g.status),
    });
  }
  if (job.finishedAt)
    out.push({
      at: job.finishedAt,
      what: "finished",
      title: job.status,
      tone: toneOf(job.status),
      ...(job.lastError ? { detail: job.lastError } : {}),
    });
  // Stable: entries at the same time keep the order above (enqueued before its group, and so on).
  const sorted = out
    .map((e, i) => ({ e, i }))
    .sort((x, y) => Date.parse(x.e.at) - Date.parse(y.e.at) || x.i - y.i)
    .map(({ e }) => e);
  // A wait is where the job is now: last, from its last record on.
  if (job.waiting) {
    const w = job.waiting;
    sorted.push({
      at: sorted.at(-1)?.at ?? job.createdAt,
      what: "waiting",
      title: `waiting for ${w.for === "event" ? `event ${w.event ?? ""}` : w.for}`,
      ...(w.until ? { detail: `until ${w.until}` } : {}),
      tone: "wait",
    });
  }
  return sorted;
}

/**
 * The groups a job's timeline shows: the one it completes and those its runs made.
 * @param {import("./api-shapes").Job} job
 */
export const groupsOf = (job) => [...(job.completes ? [job.completes] : []), ...(job.childGroups ?? [])];
