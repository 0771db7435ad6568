import { useState } from "preact/hooks";
import { api, describeError } from "./api.js";
import { html } from "./html.js";

/**
 * @typedef {{ busy?: boolean, error?: string, job?: import("./api-shapes").Enqueued }} SubmitState
 * @typedef {{ kind: string, payload: unknown, queue?: string, delaySeconds?: number, maxAttempts?: number }} EnqueueBody
 * @typedef {Event & { currentTarget: HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement }} FieldEvent
 */

/**
 * Enqueue one job (POST /jobs): a kind, a JSON payload and, optionally, a queue, a delay and max attempts.
 * @param {{
 *   queues: import("./api-shapes").Queue[],
 *   kinds: string[],
 *   onEnqueued: (job: import("./api-shapes").Enqueued) => void,
 * }} props
 */
export function EnqueueForm({ queues, kinds, onEnqueued }) {
  const [kind, setKind] = useState("echo");
  const [payload, setPayload] = useState('{ "hello": "console" }');
  const [queue, setQueue] = useState("");
  const [delay, setDelay] = useState("");
  const [maxAttempts, setMaxAttempts] = useState("");
  const [state, setState] = useState(/** @type {SubmitState} */ ({ busy: false }));

  /** @param {SubmitEvent} event */
  async function submit(event) {
    event.preventDefault();
    /** @type {EnqueueBody} */
    let body;
    try {
      body = { kind: kind.trim(), payload: payload.trim() === "" ? undefined : JSON.parse(payload) };
    } catch (err) {
      setState({ error: `the payload is not JSON: ${/** @type {SyntaxError} */ (err).message}` });
      return;
    }
    if (queue) body.queue = queue;
    if (delay !== "") body.delaySeconds = Number(delay);
    if (maxAttempts !== "") body.maxAttempts = Number(maxAttempts);
    setState({ busy: true });
    try {
      /** @type {import("./api-shapes").Enqueued} */
      const job = await api("POST", "/jobs", { body });
      setState({ job });
      onEnqueued(job);
    } catch (err) {
      setState({ error: describeError(err) });
    }
  }

  return html`
    <section class="panel enqueue" data-testid="enqueue">
      <h2>Enqueue a job</h2>
      <form onSubmit=${submit}>
        <label>
          kind
          <input
            list="kinds"
            value=${kind}
            onInput=${(/** @type {FieldEvent} */ e) => setKind(e.currentTarget.value)}
            required
            data-testid="enqueue-kind"
          />
          <datalist id="kinds">${kinds.map((k) => html`<option value=${k} />`)}</datalist>
        </label>
        <label>
          payload (JSON)
          <textarea
            rows="4"
            spellcheck="false"
            value=${payload}
            onInput=${(/** @type {FieldEvent} */ e) => setPayload(e.currentTarget.value)}
            data-testid="enqueue-payload"
          ></textarea>
        </label>
        <div class="row">
          <label>
            queue
            <select value=${queue} onChange=${(/** @type {FieldEvent} */ e) => setQueue(e.currentTarget.value)} data-testid="enqueue-queue">
              <option value="">the kind's</option>
              ${queues.map((q) => html`<option value=${q.name}>${q.name}</option>`)}
            </select>
          </label>
          <label>
            delay (s)
            <input
              type="number"
              min="0"
              step="1"
              value=${delay}
              onInput=${(/** @type {FieldEvent} */ e) => setDelay(e.currentTarget.value)}
              data-testid="enqueue-delay"
            />
          </label>
          <label>
            max attempts
            <input
              type="number"
              min="1"
              step="1"
              placeholder="kind's"
              value=${maxAttempts}
              onInput=${(/** @type {FieldEvent} */ e) => setMaxAttempts(e.currentTarget.value)}
              data-testid="enqueue-max-attempts"
            />
          </label>
          <button type="submit" class="primary" disabled=${state.busy} data-testid="enqueue-submit">Enqueue</button>
        </div>
      </form>
      ${state.error && html`<p class="error" data-testid="enqueue-error">${state.error}</p>`}
      ${
        state.job &&
        html`<p class="ok" data-testid="enqueue-result">
        ${state.job.duplicate ? "Already there (unique key): " : "Enqueued "}
        <a href=${`#/jobs/${state.job.id}`} class="mono" data-testid="enqueue-job-link">${state.job.id}</a>${" "}
        (${state.job.status})
      </p>`
      }
    </section>
  `;
}
