import { useEffect, useState } from "preact/hooks";
import { api, describeError, jobPath } from "./api.js";
import { DurableSteps } from "./durable-steps.js";
import {
  attemptsText,
  between,
  dateTime,
  duration,
  pretty,
  queueLatency,
  waitingForKeyText,
} from "./format.js";
import { html } from "./html.js";
import { JobTimeline } from "./job-timeline.js";
import { following, LivePanel, useLiveJob } from "./live-job.js";
import { usePoll } from "./poll.js";

const retryable = new Set(["dead", "cancelled"]);
const cancellable = new Set(["queued", "scheduled", "running", "paused"]);
const ended = new Set(["done", "dead", "cancelled"]);
/**
 * Where `lastError` is the job's own: it ended dead, or paused with its attempts spent. Otherwise it
 * is an earlier attempt's (a done job that failed once), shown in the timeline's history instead.
 */
const failedWith = new Set(["dead", "paused"]);

/**
 * One job: payload, result, last error, attempts and timings; retry and cancel. An open job's
 * status, steps and streams come live through its subscription (console/live-job.js), with no
 * polling meanwhile, on either tier (the pool publishes its runs as the Lambda worker does); an
 * ended one, and one whose subscription failed, are read every second.
 * @param {{ id: string, onClose: () => void }} props
 */
export function JobDetail({ id, onClose }) {
  /** @type {import("./poll.js").Poll<import("./api-shapes").Job>} */
  const poll = usePoll(() => api("GET", jobPath(id)), 1_000, [id]);
  const open = poll.data !== undefined && !ended.has(poll.data.status);
  const current = useLiveJob(id, open, () => void poll.refresh());
  const resting = following(current);
  useEffect(() => poll.pause(resting), [resting]);
  const [action, setAction] = useState(
    /** @type {{ busy: boolean, message?: string, error?: string }} */ ({
      busy: false,
      message: undefined,
      error: undefined,
    }),
  );
  // The read is the one truth shown: an event of the subscription makes the read (live-job.js).
  const job = poll.data;

  /** @param {"retry" | "cancel" | "resume"} verb */
  async function run(verb) {
    setAction({ busy: true });
    try {
      const answer = await api("POST", jobPath(id, verb));
      const message =
        verb === "cancel"
          ? `cancel: ${answer.cancel}`
          : `${verb === "resume" ? "resumed" : "retried"}: the job is ${answer.status} again, attempts reset`;
      setAction({ busy: false, message });
      await poll.refresh();
    } catch (err) {
      setAction({ busy: false, error: describeError(err) });
    }
  }

  return html`
    <section class="panel detail" data-testid="job-detail" data-job-id=${id}>
      <div class="panel-head">
        <h2>Job <span class="mono small">${id}</span></h2>
        <button type="button" class="link" onClick=${onClose} data-testid="job-close">close</button>
      </div>
      ${poll.error && html`<p class="error" data-testid="job-error">${describeError(poll.error)}</p>`}
      ${!job && !poll.error && html`<p class="muted">Loading…</p>`}
      ${
        job &&
        html`
        <div class="detail-head">
          <span class=${`badge big status-${job.status}`} data-testid="job-status">${job.status}</span>
          ${waitingForKeyText(job) && html`<span class="tag" data-testid="job-waiting-key" title="parked: it starts when one of its key's places frees (the queue's busiest keys show them)">${waitingForKeyText(job)}</span>`}
          <span>${job.kind}</span>
          <span class="muted">on ${job.queue}</span>
          ${job.priority === "critical" && html`<span class="tag">critical</span>`}
          ${typeof job.priority === "number" && job.priority !== 3 && html`<span class="tag">priority ${job.priority}</span>`}
          ${job.cancelRequested && html`<span class="tag">cancel requested</span>`}
          <span class="grow"></span>
          <button
            type="button"
            disabled=${action.busy || !retryable.has(job.status)}
            onClick=${() => run("retry")}
            data-testid="job-retry"
            title="dead or cancelled jobs can be queued again"
          >
            Retry
          </button>
          ${
            job.status === "paused" &&
            html`<button
              type="button"
              disabled=${action.busy}
              onClick=${() => run("resume")}
              data-testid="job-resume"
              title="its attempts ran out: run it again with a fresh set (POST /jobs/{id}/resume)"
            >
              Resume
            </button>`
          }
          <button
            type="button"
            class="danger"
            disabled=${action.busy || !cancellable.has(job.status)}
            onClick=${() => run("cancel")}
            data-testid="job-cancel"
          >
            Cancel
          </button>
        </div>
        ${action.message && html`<p class="ok" data-testid="job-action-message">${action.message}</p>`}
        ${action.error && html`<p class="error" data-testid="job-action-error">${action.error}</p>`}
        <dl class="facts">
          <dt>attempts</dt>
          <dd data-testid="job-attempts">${attemptsText(job)}</dd>
          <dt>created</dt>
          <dd>${dateTime(job.createdAt)}</dd>
          <dt>run at</dt>
          <dd>${dateTime(job.runAt)}</dd>
          <dt>started</dt>
          <dd>
            ${dateTime(job.startedAt)}${" "}
            <span class="muted">(${duration(between(job.createdAt, job.startedAt))} after created, ${duration(queueLatency(job))} after due)</span>
          </dd>
          <dt>finished</dt>
          <dd>${dateTime(job.finishedAt)} <span class="muted">(ran ${duration(between(job.startedAt, job.finishedAt))})</span></dd>
          ${job.uniqueKey && html`<dt>unique key</dt><dd class="mono">${job.uniqueKey}</dd>`}
          ${
            job.replayOf &&
            html`<dt>replay of</dt>
              <dd class="mono"><a href=${`#/jobs/${job.replayOf}`} data-testid="job-replay-of">${job.replayOf}</a></dd>`
          }
        </dl>
        ${
          job.lastError !== undefined &&
          (failedWith.has(job.status)
            ? html`<h3>Error</h3>
          <pre class="error-box" data-testid="job-last-error">${job.lastError}</pre>`
            : !(job.history ?? []).some((a) => a.error) &&
              html`<h3 class="muted">An earlier attempt's error</h3>
          <pre class="muted" data-testid="job-earlier-error">${job.lastError}</pre>`)
        }
        <${LivePanel} live=${current} />
        <${JobTimeline} job=${job} />
        <${DurableSteps} job=${job} onChange=${poll.refresh} />
        <h3>Payload</h3>
        <pre data-testid="job-payload">${pretty(job.payload)}</pre>
        <h3>Result</h3>
        <pre data-testid="job-result">${pretty(job.result)}</pre>
      `
      }
    </section>
  `;
}
