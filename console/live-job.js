// `@skyforge/client/realtime`, bundled for the page (console/realtime-bundle.ts).

import { useEffect, useState } from "preact/hooks";
import { api, describeError, jobPath } from "./api.js";
import { html } from "./html.js";
import { subscribe } from "./vendor/realtime.mjs";

/**
 * @typedef {{
 *   mode: "off" | "connecting" | "live" | "ended" | "failed",
 *   error?: string,
 *   steps: string[],
 *   streams: Record<string, { seq: number, text: string }[]>,
 *   closed: string[],
 * }} Live
 */

/** A burst of events (a replay's steps at connect) costs one read of the job. */
const READ_GAP_MS = 250;

/** @type {Live} */
const OFF = { mode: "off", steps: [], streams: {}, closed: [] };

/**
 * An open job's events through its subscription (docs/guide/realtime.md): POST
 * /jobs/{id}/subscriptions through the console's own API path, then `subscribe` of
 * `@skyforge/client/realtime`, the same code a user's page runs (bundled: console/realtime-bundle.ts).
 * While it connects or is live, the job's detail stops polling: a status change, a step or the end
 * calls `onChange` (at most one call per READ_GAP_MS, the last one always made), which reads the job
 * once for what events don't carry (attempts, timings, the steps' table); stream chunks read
 * nothing. When the subscription can't be made or drops, the detail polls again and says why.
 * Nothing is subscribed while `open` is false (an ended job has nothing to push).
 * @param {string} id
 * @param {boolean} open
 * @param {() => void} onChange
 * @returns {Live}
 */
export function useLiveJob(id, open, onChange) {
  const [live, setLive] = useState(OFF);
  useEffect(() => {
    if (!open) return undefined;
    const stop = new AbortController();
    setLive({ ...OFF, mode: "connecting" });
    /** @param {(l: Live) => Live} change */
    const update = (change) => !stop.signal.aborted && setLive(change);
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let reading;
    const changed = () => {
      reading ??= setTimeout(() => {
        reading = undefined;
        if (!stop.signal.aborted) onChange();
      }, READ_GAP_MS);
    };
    (async () => {
      const { url, token } = await api("POST", jobPath(id, "subscriptions"), {
        body: { expiresInSeconds: 3_600 },
      });
      for await (const event of subscribe({ url, token, signal: stop.signal })) {
        if (event.type === "status") {
          update((l) => (l.mode === "live" ? l : { ...l, mode: "live" }));
          changed();
        } else if (event.type === "step") {
          update((l) => (l.steps.includes(event.step) ? l : { ...l, steps: [...l.steps, event.step] }));
          changed();
        } else if (event.type === "stream") update((l) => withChunk(l, event));
        else if (event.type === "end") {
          update((l) => ({ ...l, mode: "ended" }));
          // The end is read at once, for the result; an ended job is read every second again.
          onChange();
        }
      }
    })().catch((/** @type {unknown} */ err) =>
      update((l) => ({ ...l, mode: "failed", error: describeError(err) })),
    );
    return () => {
      stop.abort();
      clearTimeout(reading);
      // A read found the job ended (a cancel from this page, say) before its end came live: the
      // subscription is over, and the detail reads again.
      setLive((l) => (following(l) ? { ...l, mode: "ended" } : l));
    };
  }, [id, open]);
  return live;
}

/**
 * @param {Live} live
 * @param {{ stream: string, seq: number, chunk?: unknown, closed?: true }} event
 * @returns {Live}
 */
function withChunk(live, event) {
  if (event.closed) return { ...live, closed: [...live.closed, event.stream] };
  const text = typeof event.chunk === "string" ? event.chunk : JSON.stringify(event.chunk);
  const chunks = live.streams[event.stream] ?? [];
  return {
    ...live,
    mode: live.mode === "connecting" ? "live" : live.mode,
    streams: { ...live.streams, [event.stream]: [...chunks, { seq: event.seq, text }] },
  };
}

/** Whether the detail's poll rests: the subscription is on its way or live. */
export const following = (/** @type {Live} */ live) => live.mode === "connecting" || live.mode === "live";

/**
 * What the subscription showed: how the detail is kept fresh, the steps recorded, each stream's
 * chunks as they came (one span each, numbered by their sequence).
 * @param {{ live: Live }} props
 */
export function LivePanel({ live }) {
  if (live.mode === "off") return null;
  const streams = Object.entries(live.streams);
  return html`
    <div class="live" data-testid="job-live" data-mode=${live.mode}>
      ${live.mode === "connecting" && html`<p class="muted">Subscribing to the job's events…</p>`}
      ${live.mode === "live" && html`<p class="ok" data-testid="job-live-on">live: pushed through the job's subscription (no polling)</p>`}
      ${live.mode === "ended" && html`<p class="muted">The job ended; its subscription is closed.</p>`}
      ${
        live.mode === "failed" &&
        html`<p class="error" data-testid="job-live-failed">
          live updates unavailable (${live.error}): refreshing every second instead
        </p>`
      }
      ${
        live.steps.length > 0 &&
        html`<h3>Steps recorded</h3>
          <ol class="mono small" data-testid="job-live-steps">
            ${live.steps.map((s) => html`<li key=${s}>${s}</li>`)}
          </ol>`
      }
      ${streams.map(
        ([name, chunks]) => html`
          <h3>Stream <span class="mono">${name}</span>${live.closed.includes(name) ? html` <span class="muted small">(closed)</span>` : ""}</h3>
          <pre class="stream" data-testid=${`job-stream-${name}`}>${chunks.map(
            (c) => html`<span key=${c.seq} data-seq=${c.seq} data-testid="stream-chunk">${c.text} </span>`,
          )}</pre>
        `,
      )}
    </div>
  `;
}
