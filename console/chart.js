import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import { api, describeError } from "./api.js";
import { duration, queueLatency } from "./format.js";
import { html } from "./html.js";
import { usePoll } from "./poll.js";

const WINDOW_S = 5 * 60;
const BUCKET_S = 5;
/** GET /jobs calls per refresh: on a big table the chart is a sample, not a census (see the note). */
const MAX_CALLS = 3;

/**
 * Recent done jobs: what a few bounded list calls return.
 * @param {string} queue
 * @returns {Promise<{ jobs: import("./api-shapes").Job[], complete: boolean }>}
 */
async function loadDone(queue) {
  /** @type {import("./api-shapes").Job[]} */
  const jobs = [];
  /** @type {string | undefined} */
  let cursor;
  for (let i = 0; i < MAX_CALLS; i++) {
    /** @type {import("./api-shapes").Page<import("./api-shapes").Job>} */
    const page = await api("GET", "/jobs", {
      query: { status: "done", queue, limit: 100, cursor, view: "summary" },
    });
    jobs.push(...page.items);
    cursor = page.cursor;
    if (!cursor) return { jobs, complete: true };
  }
  return { jobs, complete: false };
}

/**
 * @param {number[]} sorted
 * @param {number} q
 * @returns {number | null} null for an empty bucket (no element at -1), which uPlot leaves as a gap
 */
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? null;

/**
 * Per 5 s bucket over the last 5 minutes: throughput (jobs finished per second, by finishedAt) and
 * queue latency p50/p95 (startedAt − runAt: how long a job waited once due, so a delay it asked for
 * is not counted as latency).
 * @param {import("./api-shapes").Job[]} jobs
 * @param {number} nowMs
 * @returns {{ data: uPlot.AlignedData, total: number, p50: number | null }}
 */
export function bucketize(jobs, nowMs) {
  const end = Math.ceil(nowMs / 1_000 / BUCKET_S) * BUCKET_S;
  const start = end - WINDOW_S;
  const n = WINDOW_S / BUCKET_S;
  const x = Array.from({ length: n }, (_, i) => start + i * BUCKET_S);
  const counts = Array.from({ length: n }, () => 0);
  const waits = Array.from({ length: n }, () => /** @type {number[]} */ ([]));
  for (const job of jobs) {
    if (!job.finishedAt) continue;
    const t = Date.parse(job.finishedAt) / 1_000;
    const i = Math.floor((t - start) / BUCKET_S);
    if (i < 0 || i >= n) continue;
    counts[i] = (counts[i] ?? 0) + 1; // i is in range: the ?? is for the type check only
    const latency = queueLatency(job);
    if (latency !== undefined) waits[i]?.push(latency);
  }
  const sorted = waits.map((w) => w.sort((a, b) => a - b));
  return {
    data: [
      x,
      counts.map((c) => c / BUCKET_S),
      sorted.map((w) => quantile(w, 0.5)),
      sorted.map((w) => quantile(w, 0.95)),
    ],
    total: counts.reduce((a, b) => a + b, 0),
    p50: quantile(
      sorted.flat().sort((a, b) => a - b),
      0.5,
    ),
  };
}

/**
 * @param {number} width
 * @returns {uPlot.Options}
 */
function chartOptions(width) {
  return {
    width,
    height: 220,
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, rate: { auto: true, range: (_u, _min, max) => [0, Math.max(1, max)] } },
    axes: [
      {
        space: 70,
        values: (_u, splits) =>
          splits.map((t) => new Date(t * 1_000).toLocaleTimeString([], { hour12: false })),
      },
      { scale: "rate", label: "jobs/s", size: 50 },
      { scale: "ms", label: "latency (ms)", side: 1, size: 60, grid: { show: false } },
    ],
    series: [
      {},
      {
        label: "throughput (jobs/s)",
        scale: "rate",
        stroke: "#2f6fdb",
        fill: "rgba(47,111,219,0.12)",
        width: 2,
        points: { show: false },
      },
      {
        label: "latency p50",
        scale: "ms",
        stroke: "#d9822b",
        width: 2,
        spanGaps: true,
        value: (_u, v) => duration(v ?? undefined),
      },
      {
        label: "latency p95",
        scale: "ms",
        stroke: "#b5473a",
        width: 1,
        dash: [4, 4],
        spanGaps: true,
        value: (_u, v) => duration(v ?? undefined),
      },
    ],
  };
}

/** Throughput and latency for the last 5 minutes, from recent done jobs, redrawn every 5 s. */
/** @param {{ queue: string }} props */
export function ThroughputChart({ queue }) {
  const poll = usePoll(() => loadDone(queue), 5_000, [queue]);
  const box = useRef(/** @type {HTMLDivElement | null} */ (null));
  const plot = useRef(/** @type {uPlot | null} */ (null));
  const stats = poll.data ? bucketize(poll.data.jobs, Date.now()) : undefined;

  useEffect(() => {
    if (!stats || !box.current) return;
    if (!plot.current)
      plot.current = new uPlot(chartOptions(box.current.clientWidth || 600), stats.data, box.current);
    else plot.current.setData(stats.data);
  });
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const observer = new ResizeObserver(() => plot.current?.setSize({ width: el.clientWidth, height: 220 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, []);

  return html`
    <section class="panel chart" data-testid="chart">
      <div class="panel-head">
        <h2>Throughput and latency <span class="muted small">last 5 min${queue ? `, ${queue}` : ""}</span></h2>
        ${
          stats &&
          html`<span class="small" data-testid="chart-summary">
          ${stats.total} done · ${(stats.total / WINDOW_S).toFixed(2)} jobs/s · p50 latency ${duration(stats.p50 ?? undefined)}
        </span>`
        }
      </div>
      ${poll.error && html`<p class="error">${describeError(poll.error)}</p>`}
      <div ref=${box} class="plot"></div>
      ${
        poll.data &&
        !poll.data.complete &&
        html`<p class="muted small">
        A sample: the jobs ${MAX_CALLS} list calls found (done jobs have no time index, so a busy table is read
        in part). CloudWatch's dashboard has the exact figures on a stage.
      </p>`
      }
    </section>
  `;
}
