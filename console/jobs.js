import { useState } from "preact/hooks";
import { api, describeError } from "./api.js";
import { between, clock, duration, queueLatency, shortId, waitingForKeyText } from "./format.js";
import { html } from "./html.js";
import { usePoll } from "./poll.js";

/**
 * @typedef {{ queue: string, status: string, tag: string, kind: string, key: string, error: string, since: string }} JobFilter
 * the jobs list's filters (GET /jobs's, docs/guide/finding-runs.md; `since` is createdAfter): "" is any
 */

/** The search box's fields: typed, then applied together (Enter or Search), not on every key. */
const SEARCH_FIELDS = /** @type {const} */ ([
  ["tag", "tag"],
  ["kind", "kind"],
  ["key", "flow key"],
  ["error", "error text"],
  ["since", "since (ISO)"],
]);

/**
 * A search box over the job list: its fields start from the filters in force (the address's), and
 * Search applies them all at once.
 * @param {{ filter: JobFilter, onSearch: (next: JobFilter) => void }} props
 */
function SearchBox({ filter, onSearch }) {
  const [draft, setDraft] = useState(filter);
  /** @param {Event} e */
  const submit = (e) => {
    e.preventDefault();
    onSearch({ ...filter, ...Object.fromEntries(SEARCH_FIELDS.map(([k]) => [k, draft[k].trim()])) });
  };
  return html`
    <form class="search" onSubmit=${submit} data-testid="search-box">
      ${SEARCH_FIELDS.map(
        ([key, label]) => html`<input
          type="search"
          placeholder=${label}
          aria-label=${label}
          value=${draft[key]}
          onInput=${(/** @type {Event & { currentTarget: HTMLInputElement }} */ e) =>
            setDraft({ ...draft, [key]: e.currentTarget.value })}
          data-testid=${`search-${key}`}
        />`,
      )}
      <button type="submit" data-testid="search-submit">Search</button>
    </form>
  `;
}

export const statuses = ["queued", "scheduled", "running", "done", "dead", "cancelled", "paused"];
const PAGE = 50;
/** The statuses POST /jobs/replay takes jobs from: those that ended. */
const replayable = new Set(["dead", "done", "cancelled"]);
/** POST /jobs/replay takes at most this many ids in a filter. */
const MAX_REPLAY_IDS = 100;

/** @typedef {{ busy: boolean, replayed?: { from: string, id: string }[], skipped?: number, error?: string }} ReplayState */

/**
 * @param {number} replayed
 * @param {number} skipped
 */
const replaySummary = (replayed, skipped) =>
  `replayed ${replayed}${skipped ? ` (${skipped} no longer matched)` : ""}${replayed ? ":" : ""}`;

/**
 * Replays the selected jobs: one POST /jobs/replay per status among them (the filter takes one
 * status), naming the jobs by id. A fresh request id per click, so a request sent twice (a retry by
 * the browser or a proxy) replays nothing twice. Jobs whose status changed since they were selected
 * don't match, and are counted as skipped.
 * @param {Map<string, string>} selected id → its status when selected
 * @returns {Promise<ReplayState>}
 */
async function replaySelected(selected) {
  /** @type {Map<string, string[]>} */
  const byStatus = new Map();
  for (const [id, status] of selected) byStatus.set(status, [...(byStatus.get(status) ?? []), id]);
  /** @type {{ from: string, id: string }[]} */
  const replayed = [];
  for (const [status, ids] of byStatus) {
    /** @type {import("./api-shapes").ReplayAnswer} */
    const answer = await api("POST", "/jobs/replay", {
      body: { filter: { status, ids }, requestId: `console-${crypto.randomUUID()}` },
    });
    for (const job of answer.jobs) if (job.id) replayed.push({ from: job.from, id: job.id });
  }
  return { busy: false, replayed, skipped: selected.size - replayed.length };
}

/**
 * Jobs filtered by queue, status and the search box's fields (tag, kind, flow key, error text, since),
 * refreshed every 2 s; the filters live in the address. A page is what one GET /jobs answers, newest
 * first; a tag search may answer fewer items and a cursor to go on.
 * @param {{
 *   queues: import("./api-shapes").Queue[],
 *   filter: JobFilter,
 *   setFilter: (filter: JobFilter) => void,
 *   selectedId: string | undefined,
 *   onSelect: (id: string) => void,
 * }} props
 */
export function JobsPanel({ queues, filter, setFilter, selectedId, onSelect }) {
  const [cursors, setCursors] = useState(/** @type {string[]} */ ([])); // cursors of the pages before this one, and this one's
  const [selected, setSelected] = useState(/** @type {Map<string, string>} */ (new Map()));
  const [replay, setReplay] = useState(/** @type {ReplayState} */ ({ busy: false }));
  const cursor = cursors.at(-1);
  const { since, ...filters } = filter;
  /** @type {import("./poll.js").Poll<import("./api-shapes").Page<import("./api-shapes").Job>>} */
  const poll = usePoll(
    () => api("GET", "/jobs", { query: { ...filters, createdAfter: since, limit: PAGE, cursor } }),
    2_000,
    [filter.queue, filter.status, filter.tag, filter.kind, filter.key, filter.error, since, cursor],
  );
  const next = poll.data?.cursor;
  // Newest first; the same instant breaks by id (time-ordered), so the order never flickers.
  const items = [...(poll.data?.items ?? [])].sort(
    (a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id),
  );
  /** @param {import("./api-shapes").Job} job */
  const toggle = (job) => {
    const next = new Map(selected);
    if (next.has(job.id)) next.delete(job.id);
    else next.set(job.id, job.status);
    setSelected(next);
  };
  async function runReplay() {
    setReplay({ busy: true });
    try {
      setReplay(await replaySelected(selected));
      setSelected(new Map());
      await poll.refresh();
    } catch (err) {
      setReplay({ busy: false, error: describeError(err) });
    }
  }
  const tooMany = selected.size > MAX_REPLAY_IDS;
  /** @param {keyof JobFilter} key */
  const change = (key) => (/** @type {Event & { currentTarget: HTMLSelectElement }} */ e) => {
    setCursors([]);
    setFilter({ ...filter, [key]: e.currentTarget.value });
  };

  return html`
    <section class="panel jobs" data-testid="jobs">
      <div class="panel-head">
        <h2>Jobs</h2>
        <label>
          queue
          <select value=${filter.queue} onChange=${change("queue")} data-testid="filter-queue">
            <option value="">all</option>
            ${queues.map((q) => html`<option value=${q.name}>${q.name}</option>`)}
          </select>
        </label>
        <label>
          status
          <select value=${filter.status} onChange=${change("status")} data-testid="filter-status">
            <option value="">all</option>
            ${statuses.map((s) => html`<option value=${s}>${s}</option>`)}
          </select>
        </label>
        <span class="muted small" data-testid="jobs-count">${poll.data ? `${items.length} on this page` : ""}</span>
        ${
          poll.data?.truncated &&
          html`<span class="muted small" data-testid="jobs-truncated"
            >a large table: the newest of the first 50 000 items read; add a tag to search it all</span
          >`
        }
        <span class="grow"></span>
        <span class="muted small" data-testid="replay-count">${selected.size > 0 ? `${selected.size} selected` : ""}</span>
        <button
          type="button"
          disabled=${replay.busy || selected.size === 0 || tooMany}
          onClick=${runReplay}
          data-testid="replay-selected"
          title=${tooMany ? `at most ${MAX_REPLAY_IDS} at once` : "run the selected ended jobs again, as new jobs"}
        >
          Replay selected
        </button>
      </div>
      <${SearchBox}
        key=${[filter.tag, filter.kind, filter.key, filter.error, filter.since].join("\u0000")}
        filter=${filter}
        onSearch=${(/** @type {JobFilter} */ next) => {
          setCursors([]);
          setFilter(next);
        }}
      />
      ${
        replay.replayed &&
        html`<p class="ok" data-testid="replay-message">
          <span data-testid="replay-summary">${replaySummary(replay.replayed.length, replay.skipped ?? 0)}</span>
          ${replay.replayed.map(
            (j) =>
              html` <a class="mono" href=${`#/jobs/${j.id}`} title=${`replays ${j.from}`} data-testid="replay-new-job">${shortId(j.id)}</a>`,
          )}
        </p>`
      }
      ${replay.error && html`<p class="error" data-testid="replay-error">${replay.error}</p>`}
      ${poll.error && html`<p class="error">${describeError(poll.error)}</p>`}
      ${!poll.data && !poll.error && html`<p class="muted">Loading…</p>`}
      ${poll.data && items.length === 0 && html`<p class="muted" data-testid="jobs-empty">No jobs match.</p>`}
      ${
        items.length > 0 &&
        html`<div class="scroll">
        <table class="job-list">
          <thead>
            <tr>
              <th class="pick" title="select ended jobs to replay"></th>
              <th>id</th>
              <th>kind</th>
              <th>queue</th>
              <th>status</th>
              <th class="num">attempts</th>
              <th>created</th>
              <th class="num" title="from when it was due to its last start">latency</th>
              <th class="num">run</th>
            </tr>
          </thead>
          <tbody>
            ${items.map(
              (job) => html`<tr
                key=${job.id}
                class=${`clickable ${job.id === selectedId ? "selected" : ""}`}
                data-testid=${`job-row-${job.id}`}
                data-status=${job.status}
                onClick=${() => onSelect(job.id)}
              >
                <td class="pick" onClick=${(/** @type {Event} */ e) => e.stopPropagation()}>
                  ${
                    replayable.has(job.status) &&
                    html`<input
                      type="checkbox"
                      checked=${selected.has(job.id)}
                      onChange=${() => toggle(job)}
                      aria-label=${`select ${job.id}`}
                      data-testid=${`job-pick-${job.id}`}
                    />`
                  }
                </td>
                <td class="mono" title=${job.id}><a href=${`#/jobs/${job.id}`}>${shortId(job.id)}</a></td>
                <td>${job.kind}</td>
                <td>${job.queue}</td>
                <td>
                  <span class=${`badge status-${job.status}`} data-testid="job-row-status">${job.status}</span>
                  ${waitingForKeyText(job) && html` <span class="muted small" data-testid="job-row-waiting">${waitingForKeyText(job)}</span>`}
                </td>
                <td class="num">${job.attempts}/${job.maxAttempts}</td>
                <td>${clock(job.createdAt)}</td>
                <td class="num">${duration(queueLatency(job))}</td>
                <td class="num">${duration(between(job.startedAt, job.finishedAt))}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>`
      }
      <div class="pager">
        <button type="button" disabled=${cursors.length === 0} onClick=${() => setCursors([])}>First page</button>
        <button
          type="button"
          disabled=${!next}
          onClick=${() => next && setCursors([...cursors, next])}
          data-testid="jobs-next"
        >
          Next page
        </button>
      </div>
    </section>
  `;
}
