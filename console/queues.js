import { useState } from "preact/hooks";
import { api, describeError, queuePath } from "./api.js";
import { html } from "./html.js";
import { usePoll } from "./poll.js";

/** @type {[import("./api-shapes").CountName, string, string][]} the counts' keys, column heads and tooltips */
const countNames = [
  ["visible", "visible", "waiting in SQS, ready to be received"],
  ["inFlight", "in flight", "received and not yet deleted (running, or held)"],
  ["delayed", "delayed", "in SQS with a delay (backoff, throttle, short delays)"],
  ["dlq", "DLQ", "in the dead-letter queue: the reaper marks their jobs dead"],
];

/**
 * The queues with their live counts and pause state; a button pauses or resumes each.
 * @param {{
 *   poll: import("./poll.js").Poll<import("./api-shapes").Page<import("./api-shapes").Queue>>,
 *   onPick: (queue: string) => void,
 * }} props
 */
export function QueuesPanel({ poll, onPick }) {
  const queues = poll.data?.items ?? [];
  return html`
    <section class="panel queues" data-testid="queues">
      <h2>Queues</h2>
      ${poll.error && !poll.data && html`<p class="error">${describeError(poll.error)}</p>`}
      ${!poll.data && !poll.error && html`<p class="muted">Loading…</p>`}
      ${
        queues.length > 0 &&
        html`<table>
        <thead>
          <tr>
            <th>queue</th>
            <th>state</th>
            ${countNames.map(([, label, title]) => html`<th class="num" title=${title}>${label}</th>`)}
            <th class="num" title="maximum concurrent workers in force">concurrency</th>
            <th></th>
          </tr>
        </thead>
        <tbody>
          ${queues.map((q) => html`<${QueueRow} key=${q.name} queue=${q} onChanged=${poll.refresh} onPick=${onPick} />`)}
        </tbody>
      </table>`
      }
    </section>
  `;
}

/**
 * @param {{
 *   queue: import("./api-shapes").Queue,
 *   onChanged: () => Promise<void>,
 *   onPick: (queue: string) => void,
 * }} props
 */
function QueueRow({ queue, onChanged, onPick }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(/** @type {string | undefined} */ (undefined));
  const cooling = queue.cooldownUntil && Date.parse(queue.cooldownUntil) > Date.now();
  const state = queue.paused ? "paused" : cooling ? "cooling down" : "running";

  /** @param {MouseEvent} event */
  const pick = (event) => {
    event.preventDefault();
    onPick(queue.name);
  };

  async function toggle() {
    setBusy(true);
    setError(undefined);
    try {
      await api("POST", queuePath(queue.name, queue.paused ? "resume" : "pause"));
      await onChanged();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return html`
    <tr data-testid=${`queue-${queue.name}`} class=${queue.paused ? "paused" : ""}>
      <td>
        <a href="#" onClick=${pick} title="show this queue's jobs"
          >${queue.name}</a
        >
        ${queue.declared?.tier === "pool" || queue.eventSource === undefined ? html` <span class="tag">pool</span>` : ""}
      </td>
      <td>
        <span class=${`badge state-${state.replace(" ", "-")}`} data-testid=${`queue-state-${queue.name}`}>${state}</span>
        ${error && html`<div class="error" data-testid=${`queue-error-${queue.name}`}>${error}</div>`}
      </td>
      ${countNames.map(
        ([
          key,
        ]) => html`<td class=${`num ${key === "dlq" && (queue.counts?.[key] ?? 0) > 0 ? "alert" : ""}`} data-testid=${`queue-${key}-${queue.name}`}>
          ${queue.counts?.[key] ?? "—"}
        </td>`,
      )}
      <td class="num">${queue.maxConcurrency ?? "—"}</td>
      <td>
        <button type="button" disabled=${busy} onClick=${toggle} data-testid=${`queue-toggle-${queue.name}`}>
          ${queue.paused ? "Resume" : "Pause"}
        </button>
      </td>
    </tr>
  `;
}

const KEYS_SHOWN = 10;

/**
 * The picked queue's busiest flow keys (GET /keys?queue=…): its keys with the most jobs parked in
 * their lines, refreshed every 2 s as the queue's counts and its jobs are.
 * @param {{ queue: string }} props
 */
export function BusiestKeysPanel({ queue }) {
  /** @type {import("./poll.js").Poll<import("./api-shapes").BusiestKeys>} */
  const poll = usePoll(() => api("GET", "/keys", { query: { queue, limit: KEYS_SHOWN } }), 2_000, [queue]);
  const keys = poll.data?.items ?? [];
  return html`
    <section class="panel keys" data-testid="busiest-keys">
      <div class="panel-head">
        <h2>Busiest keys <span class="muted small">· ${queue}</span></h2>
        ${poll.data?.truncated && html`<span class="muted small" title="the API looks at 200 waiting keys at most">of the first 200 waiting keys</span>`}
      </div>
      ${poll.error && html`<p class="error">${describeError(poll.error)}</p>`}
      ${!poll.data && !poll.error && html`<p class="muted">Loading…</p>`}
      ${poll.data && keys.length === 0 && html`<p class="muted" data-testid="keys-empty">No flow key of this queue has jobs waiting.</p>`}
      ${
        keys.length > 0 &&
        html`<table>
        <thead>
          <tr>
            <th>kind</th>
            <th>key</th>
            <th class="num" title="places held / the key's concurrency">running</th>
            <th class="num" title="jobs parked in the key's line">waiting</th>
          </tr>
        </thead>
        <tbody>
          ${keys.map(
            (k) => html`<tr key=${`${k.kind}#${k.key}`} data-testid=${`key-row-${k.kind}-${k.key}`}>
              <td>${k.kind}${k.limit !== undefined ? html` <span class="muted small" title="the kind's flow limit this key is of">· ${k.limit}</span>` : ""}</td>
              <td class="mono" title=${k.key}>${k.key}</td>
              <td class="num" data-testid="key-running">${k.running}${k.concurrency !== undefined ? ` / ${k.concurrency}` : ""}</td>
              <td class="num" data-testid="key-waiting">${k.waiting}</td>
            </tr>`,
          )}
        </tbody>
      </table>`
      }
    </section>
  `;
}
