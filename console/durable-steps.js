import { useRef, useState } from "preact/hooks";
import { api, describeError, jobPath } from "./api.js";
import { clock, dateTime } from "./format.js";
import { html } from "./html.js";
import { usePoll } from "./poll.js";

/** @typedef {{ currentTarget: HTMLTextAreaElement }} FieldEvent */

/**
 * Where a token's url points, as a call on the page's own origin: the path from its last
 * `/tokens/` and its secret. The url is the API's (a stage's, or the local stack's), but the
 * console sends every call to its own origin: the local stack, or `skyforge console`'s proxy,
 * which signs it for the stage. So the call carries the console's token like any other.
 * @param {string} url
 * @returns {{ path: string, secret?: string } | undefined}
 */
export function tokenCall(url) {
  let parsed;
  try {
    parsed = new URL(url, location.origin);
  } catch {
    return undefined;
  }
  const at = parsed.pathname.lastIndexOf("/tokens/");
  if (at < 0) return undefined;
  const secret = parsed.searchParams.get("secret") ?? undefined;
  return { path: parsed.pathname.slice(at), ...(secret ? { secret } : {}) };
}

/**
 * What a waiting job waits for, in words.
 * @param {import("./api-shapes").Waiting} w
 */
function waitingWords(w) {
  if (w.for === "token") return `a token (${w.token ?? "?"})`;
  if (w.for === "event") return `the event ${w.event} matching ${w.match}`;
  return "a sleep to end";
}

/**
 * A token wait's form: the data (JSON) POSTed to the token's url; `onDone` is told, and refreshes
 * the job (whose wait, and with it this form, then ends).
 * @param {{ url: string, onDone: (done: import("./api-shapes").TokenCompleted) => Promise<void> }} props
 */
function CompleteToken({ url, onDone }) {
  const [text, setText] = useState('{ "approved": true }');
  const [state, setState] = useState(/** @type {{ busy: boolean, error?: string }} */ ({ busy: false }));
  /** @param {Event} e */
  async function submit(e) {
    e.preventDefault();
    let data;
    try {
      data = text.trim() === "" ? null : JSON.parse(text);
    } catch (err) {
      setState({ busy: false, error: `the data is not JSON: ${/** @type {Error} */ (err).message}` });
      return;
    }
    const call = tokenCall(url);
    if (!call) {
      setState({ busy: false, error: `the token's url names no token: ${url}` });
      return;
    }
    setState({ busy: true });
    try {
      /** @type {import("./api-shapes").TokenCompleted} */
      const done = await api("POST", call.path, { query: { secret: call.secret }, body: { data } });
      setState({ busy: false });
      await onDone(done);
    } catch (err) {
      setState({ busy: false, error: describeError(err) });
    }
  }
  return html`
    <form class="token-form" onSubmit=${submit} data-testid="token-form">
      <label>
        data (JSON) for the token
        <textarea
          rows="3"
          spellcheck="false"
          value=${text}
          onInput=${(/** @type {FieldEvent} */ e) => setText(e.currentTarget.value)}
          data-testid="token-data"
        ></textarea>
      </label>
      <button type="submit" class="primary" disabled=${state.busy} data-testid="token-complete">Complete token</button>
      ${state.error && html`<p class="error" data-testid="token-error">${state.error}</p>`}
    </form>
  `;
}

/**
 * A durable job's recorded steps (GET /jobs/{id}/steps) in the handler's order, and what it waits
 * for; a token wait gets a form that completes the token. Read again whenever the job changes (and
 * every 5 s, for steps a running job records); nothing is shown for a job with no steps.
 * @param {{ job: import("./api-shapes").Job, onChange: () => Promise<void> }} props
 */
export function DurableSteps({ job, onChange }) {
  const w = job.waiting;
  /** @type {import("./poll.js").Poll<import("./api-shapes").JobSteps>} */
  const poll = usePoll(() => api("GET", jobPath(job.id, "steps")), 5_000, [
    job.id,
    job.status,
    job.attempts,
    w?.for,
    w?.until,
  ]);
  // The last answer stays on screen while the job's change reloads it: no flicker, and the token
  // form (and what was typed in it) is not remounted under the person typing.
  const [completed, setCompleted] = useState(/** @type {string | undefined} */ (undefined));
  const last = useRef(/** @type {import("./api-shapes").JobSteps | undefined} */ (undefined));
  if (poll.data) last.current = poll.data;
  const shown = last.current?.jobId === job.id ? last.current : undefined;
  const steps = shown?.steps ?? [];
  if (steps.length === 0 && !w && !completed) return null;
  const tokenStep =
    w?.for === "token" ? steps.find((s) => s.type === "token" && tokenOf(s)?.id === w.token) : undefined;
  const url = tokenStep && tokenOf(tokenStep)?.url;
  /** @param {import("./api-shapes").TokenCompleted} done */
  const onDone = async (done) => {
    setCompleted(
      `completed ${done.id}: the job ${done.resumed ? "resumes now" : "resumes when its run ends"}`,
    );
    await Promise.all([poll.refresh(), onChange()]);
  };
  return html`
    <h3>Steps</h3>
    ${
      w &&
      html`<p class="waiting" data-testid="job-waiting" data-waiting-for=${w.for}>
        waiting for ${waitingWords(w)}${w.until ? html`, until ${dateTime(w.until)}` : ""}
      </p>`
    }
    ${poll.error && html`<p class="error" data-testid="steps-error">${describeError(poll.error)}</p>`}
    ${
      steps.length > 0 &&
      html`<table class="steps" data-testid="job-steps">
        <thead>
          <tr><th>name</th><th>type</th><th>status</th><th class="num">attempt</th><th>when</th><th>until</th></tr>
        </thead>
        <tbody>
          ${steps.map(
            (s) => html`<tr key=${s.name} data-testid=${`step-${s.name}`} data-status=${s.status}>
              <td class="mono">${s.name}</td>
              <td>${s.type}</td>
              <td><span class=${`badge step-${s.status}`}>${s.status}</span></td>
              <td class="num">${s.attempt}</td>
              <td title=${dateTime(s.at)}>${clock(s.at)}</td>
              <td title=${s.until ? dateTime(s.until) : ""}>${s.until ? clock(s.until) : ""}</td>
            </tr>`,
          )}
        </tbody>
      </table>`
    }
    ${url && html`<${CompleteToken} key=${w?.token} url=${url} onDone=${onDone} />`}
    ${completed && html`<p class="ok" data-testid="token-message">${completed}</p>`}
  `;
}

/**
 * A token step's result, `{ id, url }`, when it has that shape.
 * @param {import("./api-shapes").Step} step
 * @returns {{ id: string, url: string } | undefined}
 */
function tokenOf(step) {
  const r = /** @type {{ id?: unknown, url?: unknown } | null | undefined} */ (step.result);
  return typeof r?.id === "string" && typeof r.url === "string" ? { id: r.id, url: r.url } : undefined;
}
