import { useState } from "preact/hooks";
import { api, describeError } from "./api.js";
import { between, clock, duration, queueLatency, shortId } from "./format.js";
import { html } from "./html.js";
import { usePoll } from "./poll.js";

/** @typedef {{ queue: string, status: string }} JobFilter the jobs list's filter: "" is any */

export const statuses = ["queued", "scheduled", "running", "done", "dead", "cancelled"];
const PAGE = 50;

/**
 * Jobs filtered by queue and status, refreshed every 2 s. A page is what one GET /jobs answers: with
 * a queue and status scheduled|dead it reads the status index, otherwise a bounded scan, which may
 * answer fewer items and a cursor to go on. Items are shown newest first within the page.
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
  const cursor = cursors.at(-1);
  /** @type {import("./poll.js").Poll<import("./api-shapes").Page<import("./api-shapes").Job>>} */
  const poll = usePoll(
    () => api("GET", "/jobs", { query: { queue: filter.queue, status: filter.status, limit: PAGE, cursor } }),
    2_000,
    [filter.queue, filter.status, cursor],
  );
  const next = poll.data?.cursor;
  const items = [...(poll.data?.items ?? [])].sort((a, b) => b.createdAt.localeCompare(a.createdAt));
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
        <span class="muted small">${poll.data ? `${items.length} on this page` : ""}</span>
      </div>
      ${poll.error && html`<p class="error">${describeError(poll.error)}</p>`}
      ${!poll.data && !poll.error && html`<p class="muted">Loading…</p>`}
      ${poll.data && items.length === 0 && html`<p class="muted" data-testid="jobs-empty">No jobs match.</p>`}
      ${
        items.length > 0 &&
        html`<div class="scroll">
        <table class="job-list">
          <thead>
            <tr>
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
                <td class="mono" title=${job.id}><a href=${`#/jobs/${job.id}`}>${shortId(job.id)}</a></td>
                <td>${job.kind}</td>
                <td>${job.queue}</td>
                <td><span class=${`badge status-${job.status}`} data-testid="job-row-status">${job.status}</span></td>
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
