import { describe, expect, it } from "vitest";
import { consoleBrowser, openConsole, screenshot, see } from "../../support/console-browser.ts";

/**
 * A job's timeline in the web console (console/timeline.js, job-timeline.js), in a real browser
 * against a real `npm start`: built from the job's own records and its group's, no collector.
 */
const env = consoleBrowser();
const http = env.http;
const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

const entry = (page: import("playwright-core").Page, what: string, text: string | RegExp) =>
  page.locator(`[data-testid="job-timeline"] [data-testid="timeline-entry"][data-what="${what}"]`, {
    hasText: text,
  });

describe("a job's timeline in the web console", () => {
  it("a group's completion job: enqueued (with its trace), its attempt, the group it completes with its children's counts, done; a child names its group", async () => {
    const res = await fetch(`${env.stack().url}/groups`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
      body: JSON.stringify({
        children: [1, 2].map((i) => ({ kind: "echo", payload: { i } })),
        onComplete: { kind: "echo", payload: { folded: true } },
      }),
    });
    expect(res.status).toBe(201);
    const group = (await res.json()) as { id: string; completionJobId: string };
    await http.untilStatus(group.completionJobId, "done");
    const completion = (await http.call("GET", `/jobs/${group.completionJobId}`)).body;
    expect(completion).toMatchObject({ completes: group.id });
    expect(completion.traceparent).toMatch(new RegExp(`^00-${TRACE}-`));

    const { page, problems } = await openConsole(
      `${env.stack().url}/console/#/jobs/${group.completionJobId}`,
    );
    await see(entry(page, "enqueued", `trace ${TRACE}`));
    await see(entry(page, "attempt", "attempt 1"));
    await see(entry(page, "group", `completes group ${group.id}: succeeded`));
    await see(entry(page, "group", "2 children: 2 done, 0 dead, 0 cancelled, 0 pending"));
    await see(entry(page, "finished", "done"));
    const order = await page
      .locator('[data-testid="job-timeline"] [data-testid="timeline-entry"]')
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-what")));
    // Oldest first: the group (created before its completion job), then the job's own records.
    expect(order.indexOf("group")).toBeLessThan(order.indexOf("enqueued"));
    expect(order.indexOf("enqueued")).toBeLessThan(order.indexOf("attempt"));
    expect(order.at(-1)).toBe("finished");

    await screenshot(page, "console-timeline.png");

    // A child: its group, by id.
    const children = (await http.call("GET", `/groups/${group.id}/children`)).body.items as { id: string }[];
    await page.goto(`${env.stack().url}/console/#/jobs/${children[0]?.id}`);
    await see(entry(page, "group", `child of group ${group.id}`));
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
