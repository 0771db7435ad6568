// `@skyforge/client/realtime`, bundled for the page (console/realtime-bundle.ts).

import { useEffect, useState } from "preact/hooks";
import { api, describeError, queuePath } from "./api.js";
import { html } from "./html.js";
import { tailQueue } from "./vendor/realtime.mjs";

/** The newest events kept on screen. */
const KEPT = 100;

/**
 * @typedef {{ jobId: string, status: string, at: number, n: number }} TailEvent
 * @typedef {{ state: "off" | "connecting" | "tailing" | "failed", error?: string, events: TailEvent[] }} Tail
 */

/**
 * A queue's tail (docs/guide/realtime.md, "A queue's tail"): every status change of the picked
 * queue's jobs as it happens, newest first, through a queue token (POST /queues/{name}/subscriptions
 * through the console's own API path) and `tailQueue` of `@skyforge/client/realtime`. It starts
 * when asked and shows what happens from then on: a tail has no read-back.
 * @param {{ queue: string }} props
 */
export function QueueTail({ queue }) {
  const [on, setOn] = useState(false);
  const [tail, setTail] = useState(/** @type {Tail} */ ({ state: "off", events: [] }));
  useEffect(() => {
    if (!on) {
      setTail((t) => ({ ...t, state: "off" }));
      return undefined;
    }
    const stop = new AbortController();
    let n = 0;
    setTail({ state: "connecting", events: [] });
    (async () => {
      const { url, token } = await api("POST", queuePath(queue, "subscriptions"), { body: {} });
      const onSubscribed = () => setTail((t) => ({ ...t, state: "tailing" }));
      for await (const e of tailQueue({ url, token, signal: stop.signal, onSubscribed })) {
        const event = { jobId: e.jobId, status: e.status, at: e.at, n: ++n };
        setTail((t) => ({ ...t, events: [event, ...t.events].slice(0, KEPT) }));
      }
    })().catch((/** @type {unknown} */ err) => {
      if (!stop.signal.aborted) setTail((t) => ({ ...t, state: "failed", error: describeError(err) }));
    });
    return () => stop.abort();
  }, [queue, on]);

  return html`
    <section class="panel tail" data-testid="queue-tail" data-state=${tail.state}>
      <div class="panel-head">
        <h2>Tail <span class="muted small">· ${queue}</span></h2>
        <span class="muted small">
          ${tail.state === "connecting" && "subscribing…"}
          ${tail.state === "tailing" && "live: each status change of this queue's jobs"}
        </span>
        <button type="button" onClick=${() => setOn(!on)} data-testid="queue-tail-toggle">
          ${on ? "Stop" : "Tail this queue"}
        </button>
      </div>
      ${tail.state === "failed" && html`<p class="error" data-testid="queue-tail-error">${tail.error}</p>`}
      ${on && tail.state === "tailing" && tail.events.length === 0 && html`<p class="muted">Nothing yet: a job of this queue changing status shows here.</p>`}
      ${
        tail.events.length > 0 &&
        html`<table>
          <thead><tr><th>at</th><th>job</th><th>status</th></tr></thead>
          <tbody>
            ${tail.events.map(
              (
                e,
              ) => html`<tr key=${e.n} data-testid="tail-event" data-job-id=${e.jobId} data-status=${e.status}>
                <td class="small">${new Date(e.at).toLocaleTimeString()}</td>
                <td class="mono small"><a href=${`#/jobs/${encodeURIComponent(e.jobId)}`}>${e.jobId}</a></td>
                <td><span class=${`badge status-${e.status}`}>${e.status}</span></td>
              </tr>`,
            )}
          </tbody>
        </table>`
      }
    </section>
  `;
}
