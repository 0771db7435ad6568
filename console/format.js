/** Display helpers: times, durations, JSON. */

/** @param {unknown} value */
export const pretty = (value) => (value === undefined ? "—" : JSON.stringify(value, null, 2));

/** @param {string | undefined} iso */
export function clock(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour12: false });
}

/** @param {string | undefined} iso */
export function dateTime(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toLocaleDateString()} ${clock(iso)}`;
}

/** @param {number | undefined} ms */
export function duration(ms) {
  if (ms === undefined || Number.isNaN(ms)) return "—";
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1_000)} s`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/**
 * Milliseconds from one ISO time to another, when both are there.
 * @param {string | undefined} fromIso
 * @param {string | undefined} toIso
 */
export function between(fromIso, toIso) {
  if (!fromIso || !toIso) return undefined;
  return Date.parse(toIso) - Date.parse(fromIso);
}

/** @param {Date | undefined} date */
export function ago(date) {
  if (!date) return "never";
  const s = Math.max(0, Math.round((Date.now() - date.getTime()) / 1_000));
  return s < 2 ? "just now" : `${s} s ago`;
}

/** @param {string} id */
export function shortId(id) {
  return id.length > 12 ? `…${id.slice(-8)}` : id;
}

/**
 * How a run ended that gave its attempt back (docs/architecture.md §4): a durable wait, a throttle, a
 * hand-back at shutdown. Such a run is not one of the job's attempts.
 */
export const givesAttemptBack = new Set(["suspend", "throttled", "released"]);

/**
 * The attempts a job used of those it has, and the runs that gave theirs back (its history's), so
 * the count reads as its timeline does: "0 / 3 · 2 runs gave their attempt back".
 * @param {Pick<import("./api-shapes").Job, "attempts" | "maxAttempts" | "history">} job
 */
export function attemptsText(job) {
  const used = `${job.attempts} / ${job.maxAttempts}`;
  const back = (job.history ?? []).filter((a) => givesAttemptBack.has(a.outcome)).length;
  if (back === 0) return used;
  return `${used} · ${back === 1 ? "1 run gave its attempt back" : `${back} runs gave their attempt back`}`;
}

/**
 * A parked job (docs/architecture.md §20): queued, waiting for a place among a flow key's runs: its
 * first limit's key, or the key of the limit whose line it is in (`waitingIn`), named.
 * @param {Pick<import("./api-shapes").Job, "waitingForKey" | "flowKey" | "flowKeys" | "waitingIn">} job
 */
export function waitingForKeyText(job) {
  if (!job.waitingForKey) return undefined;
  if (job.waitingIn === undefined) return `waiting for key ${job.flowKey ?? ""}`;
  return `waiting for key ${job.flowKeys?.[job.waitingIn] ?? ""} (limit ${job.waitingIn})`;
}

/**
 * Queue latency: from when the job was due (runAt: enqueue, delay or backoff) to its last start.
 * @param {Pick<import("./api-shapes").Job, "runAt" | "startedAt">} job
 */
export function queueLatency(job) {
  const ms = between(job.runAt, job.startedAt);
  return ms === undefined ? undefined : Math.max(0, ms);
}
