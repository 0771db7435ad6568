import { render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import { adoptTokenFromAddress, api, describeError } from "./api.js";
import { ThroughputChart } from "./chart.js";
import { EnqueueForm } from "./enqueue.js";
import { ago } from "./format.js";
import { html } from "./html.js";
import { JobDetail } from "./job-detail.js";
import { JobsPanel } from "./jobs.js";
import { usePoll } from "./poll.js";
import { QueueTail } from "./queue-tail.js";
import { BusiestKeysPanel, QueuesPanel } from "./queues.js";
import { SchedulesPanel } from "./schedules.js";

/**
 * The job a `#/jobs/<id>` address names, so a job's detail has a link of its own: `{ id }`, or
 * `{ unreadable }` for an address no job can have (a stray `%`, as in `#/jobs/%`), or undefined.
 * @returns {{ id: string, unreadable?: undefined } | { id?: undefined, unreadable: string } | undefined}
 */
function jobFromHash() {
  const m = /^#\/jobs\/([^/?#]+)/.exec(location.hash);
  if (!m?.[1]) return undefined;
  try {
    return { id: decodeURIComponent(m[1]) };
  } catch {
    return { unreadable: m[1] };
  }
}

/**
 * The job the address names, and a way to name another (undefined: none).
 * @returns {[ReturnType<typeof jobFromHash>, (next: string | undefined) => void]}
 */
function useHashJob() {
  const [picked, setPicked] = useState(jobFromHash);
  useEffect(() => {
    const onHash = () => setPicked(jobFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  /** @param {string | undefined} next */
  const select = (next) => {
    // The job list's filters stay in the address (after its `?`) when a job is picked or closed.
    const query = location.hash.includes("?") ? location.hash.slice(location.hash.indexOf("?")) : "";
    location.hash = `${next ? `#/jobs/${encodeURIComponent(next)}` : "#/"}${query}`;
  };
  return [picked, select];
}

/** The job list's filters kept in the address, `#/…?tag=…&status=…`, so a search has a link of its own. */
const FILTER_KEYS = /** @type {const} */ (["queue", "status", "tag", "kind", "key", "error", "since"]);

/** @returns {import("./jobs.js").JobFilter} */
function filterFromHash() {
  const at = location.hash.indexOf("?");
  const params = new URLSearchParams(at < 0 ? "" : location.hash.slice(at + 1));
  /** @type {Record<string, string>} */
  const filter = {};
  for (const key of FILTER_KEYS) filter[key] = params.get(key) ?? "";
  return /** @type {import("./jobs.js").JobFilter} */ (filter);
}

/**
 * The job list's filters, read from the address and written back to it (replacing the entry, so
 * the back button doesn't step through every change).
 * @returns {[import("./jobs.js").JobFilter, (next: import("./jobs.js").JobFilter) => void]}
 */
function useHashFilter() {
  const [filter, setState] = useState(filterFromHash);
  useEffect(() => {
    const onHash = () => setState(filterFromHash());
    window.addEventListener("hashchange", onHash);
    return () => window.removeEventListener("hashchange", onHash);
  }, []);
  /** @param {import("./jobs.js").JobFilter} next */
  const setFilter = (next) => {
    const params = new URLSearchParams();
    for (const key of FILTER_KEYS) if (next[key]) params.set(key, next[key]);
    const base = location.hash.replace(/\?.*$/, "") || "#/";
    const query = params.toString();
    history.replaceState(null, "", `${base}${query ? `?${query}` : ""}`);
    setState(next);
  };
  return [filter, setFilter];
}

/**
 * In place of a job's detail when the address names no job at all.
 * @param {{ text: string, onClose: () => void }} props
 */
function NoSuchJob({ text, onClose }) {
  return html`
    <section class="panel detail" data-testid="job-missing">
      <div class="panel-head">
        <h2>No such job</h2>
        <button type="button" class="link" onClick=${onClose} data-testid="job-close">close</button>
      </div>
      <p class="error">The address names no job: <span class="mono">${text}</span> is not a job id.</p>
    </section>
  `;
}

/**
 * A heartbeat line: when the API last answered, or why it didn't.
 * @param {{ poll: import("./poll.js").Poll<unknown> }} props
 */
function Connection({ poll }) {
  const [, tick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => tick((n) => n + 1), 1_000);
    return () => clearInterval(t);
  }, []);
  if (poll.error) {
    return html`<span class="conn down" data-testid="connection">API error: ${describeError(poll.error)}</span>`;
  }
  return html`<span class="conn up" data-testid="connection">live · updated ${ago(poll.at)}</span>`;
}

function App() {
  /** @type {import("./poll.js").Poll<import("./api-shapes").Page<import("./api-shapes").Queue>>} */
  const queuesPoll = usePoll(() => api("GET", "/queues"), 2_000);
  /** @type {import("./poll.js").Poll<import("./api-shapes").Page<import("./api-shapes").Schedule>>} */
  const schedulesPoll = usePoll(() => api("GET", "/schedules"), 10_000);
  const [filter, setFilter] = useHashFilter();
  const [picked, select] = useHashJob();
  const selectedId = picked?.id;
  const queues = queuesPoll.data?.items ?? [];
  // Suggestions for the enqueue form: the kinds the schedules fire. The API has no kinds route; an
  // unknown kind's error lists every kind.
  const kinds = useMemo(() => {
    const seen = new Set((schedulesPoll.data?.items ?? []).map((s) => s.kind));
    return [...seen].sort();
  }, [schedulesPoll.data]);

  return html`
    <header class="top">
      <h1>skyforge <span class="muted">console</span></h1>
      <span class="muted small" data-testid="target">${location.host}</span>
      <span class="grow"></span>
      <${Connection} poll=${queuesPoll} />
    </header>
    <main class="layout">
      <${QueuesPanel} poll=${queuesPoll} onPick=${(/** @type {string} */ queue) => setFilter({ ...filter, queue })} />
      ${filter.queue && html`<${BusiestKeysPanel} queue=${filter.queue} />`}
      ${filter.queue && html`<${QueueTail} key=${filter.queue} queue=${filter.queue} />`}
      <div class="pair">
        <${ThroughputChart} queue=${filter.queue} />
        <${EnqueueForm} queues=${queues} kinds=${kinds} onEnqueued=${(/** @type {import("./api-shapes").Enqueued} */ job) => select(job.id)} />
      </div>
      <div class=${`pair ${picked ? "with-detail" : ""}`}>
        <${JobsPanel}
          queues=${queues}
          filter=${filter}
          setFilter=${setFilter}
          selectedId=${selectedId}
          onSelect=${select}
        />
        ${selectedId !== undefined && html`<${JobDetail} key=${selectedId} id=${selectedId} onClose=${() => select(undefined)} />`}
        ${picked?.unreadable !== undefined && html`<${NoSuchJob} text=${picked.unreadable} onClose=${() => select(undefined)} />`}
      </div>
      <${SchedulesPanel} poll=${schedulesPoll} />
    </main>
  `;
}

// Before the first call, and before the job link (#/jobs/<id>) is read from the same fragment.
adoptTokenFromAddress();
const root = /** @type {HTMLElement} */ (document.getElementById("app")); // index.html has it
root.textContent = ""; // the "Loading…" line: render() adds to what is there
render(html`<${App} />`, root);
