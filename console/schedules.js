import { describeError } from "./api.js";
import { dateTime } from "./format.js";
import { html } from "./html.js";

/**
 * The schedules (GET /schedules): cron, time zone, what each fires, its next run and its last error.
 * @param {{ poll: import("./poll.js").Poll<import("./api-shapes").Page<import("./api-shapes").Schedule>> }} props
 */
export function SchedulesPanel({ poll }) {
  const items = poll.data?.items ?? [];
  return html`
    <section class="panel schedules" data-testid="schedules">
      <h2>Schedules</h2>
      ${poll.error && html`<p class="error">${describeError(poll.error)}</p>`}
      ${poll.data && items.length === 0 && html`<p class="muted">No schedules.</p>`}
      ${
        items.length > 0 &&
        html`<table>
        <thead>
          <tr>
            <th>name</th>
            <th>cron</th>
            <th>kind → queue</th>
            <th>next run</th>
            <th>last run</th>
            <th>state</th>
          </tr>
        </thead>
        <tbody>
          ${items.map(
            (s) => html`<tr key=${s.name} data-testid=${`schedule-${s.name}`}>
              <td>${s.name} <span class="tag" title="declared in code, or made through the API">${s.source}</span></td>
              <td class="mono">${s.cron} <span class="muted">${s.timezone}</span></td>
              <td>${s.kind}${s.queue ? ` → ${s.queue}` : ""}</td>
              <td>${dateTime(s.nextRunAt)}</td>
              <td>${dateTime(s.lastRunAt)}</td>
              <td>
                <span class=${`badge ${s.enabled ? "state-running" : "state-paused"}`}>${s.enabled ? "enabled" : "disabled"}</span>
                ${s.misfire === "once" ? html` <span class="tag">misfire: once</span>` : ""}
                ${s.lastError && html`<div class="error small" title=${s.lastErrorAt ?? ""}>${s.lastError}</div>`}
              </td>
            </tr>`,
          )}
        </tbody>
      </table>`
      }
    </section>
  `;
}
