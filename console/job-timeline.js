import { api, jobPath } from "./api.js";
import { clock, duration } from "./format.js";
import { html } from "./html.js";
import { usePoll } from "./poll.js";
import { groupsOf, timelineOf } from "./timeline.js";

/**
 * The job's timeline (timeline.js): its own record, plus its steps and its groups when the API has
 * them. A route this API doesn't have (no steps, a purged group) leaves that part out, never the rest.
 * @param {{ job: import("./api-shapes").Job }} props
 */
export function JobTimeline({ job }) {
  const ids = groupsOf(job);
  const more = usePoll(
    async () => {
      const [steps, groups] = await Promise.all([
        api("GET", jobPath(job.id, "steps")).then(
          (/** @type {import("./api-shapes").JobSteps} */ s) => s.steps,
          () => [],
        ),
        Promise.all(
          ids.map((id) =>
            api("GET", `/groups/${encodeURIComponent(id)}`).then(
              (/** @type {import("./api-shapes").Group} */ g) => g,
              () => undefined,
            ),
          ),
        ),
      ]);
      return { steps, groups: groups.filter((g) => g !== undefined) };
    },
    2_000,
    [job.id, ids.join(",")],
  );
  const entries = timelineOf(job, more.data ?? {});
  return html`
    <h3>Timeline</h3>
    <ol class="timeline" data-testid="job-timeline">
      ${entries.map(
        (e) => html`
          <li class=${`timeline-${e.what} ${e.tone ? `tone-${e.tone}` : ""}`} data-testid="timeline-entry" data-what=${e.what}>
            <span class="mono muted">${clock(e.at)}</span>
            <span class="timeline-title">${e.title}</span>
            ${e.ms !== undefined && html`<span class="muted">${duration(e.ms)}</span>`}
            ${e.detail && html`<span class="muted small">${e.detail}</span>`}
          </li>
        `,
      )}
    </ol>
  `;
}
