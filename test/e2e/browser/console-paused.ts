import { describe, expect, it } from "vitest";
import { consoleBrowser, detailStatus, openConsole, see } from "../../support/console-browser.ts";
import { waitFor } from "../../support/wait.ts";

/**
 * A paused job in the web console (docs/architecture.md §21), in a real browser against a real
 * `npm start`: the demo kind import-row pauses after both attempts on a row it can't read; its
 * detail shows it paused, each attempt in its timeline, and a Resume button that runs it again.
 */
const env = consoleBrowser();
const http = env.http;

describe("a paused job in the web console", () => {
  it("shows it paused with its attempts, and Resume runs it again", async () => {
    const made = await http.call("POST", "/jobs", {
      kind: "import-row",
      payload: { line: "no commas here" },
    });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    await http.untilStatus(id, "paused", 60_000);

    const { page, problems } = await openConsole(`${env.stack().url}/console/#/jobs/${id}`);
    await see(detailStatus(page, id, "paused"));
    await see(
      page.locator('[data-testid="timeline-entry"][data-what="attempt"]', { hasText: "attempt 2: paused" }),
    );
    await page.getByTestId("job-resume").click();
    await see(page.getByTestId("job-action-message").filter({ hasText: "resumed" }));
    // The same row again: it runs and pauses again, with two attempts more in its history.
    const again = await waitFor(async () => {
      const job = (await http.call("GET", `/jobs/${id}`)).body;
      return job.status === "paused" && job.history.length === 4 ? job : undefined;
    }, "the job to pause again");
    expect(again.history.map((a: { outcome: string }) => a.outcome)).toEqual([
      "retry",
      "paused",
      "retry",
      "paused",
    ]);
    // Its timeline now has both pauses (each run's attempts counted from 1 again after the resume).
    await see(
      page
        .locator('[data-testid="timeline-entry"][data-what="attempt"]', { hasText: "attempt 2: paused" })
        .nth(1),
    );
    await see(detailStatus(page, id, "paused"));
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);
});
