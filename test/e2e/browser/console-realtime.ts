import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { consoleBrowser, detailStatus, openConsole, see, UI_MS } from "../../support/console-browser.ts";

/**
 * The web console live (console/live-job.js, console/queue-tail.js), in a real chromium against a
 * real `npm start`: an open job's words arrive through its subscription with the detail's polling at
 * rest, a failed subscription falls back to polling and says so, and a queue's tail shows a new
 * job's status changes. Every wait is Playwright's, bounded.
 */
const env = consoleBrowser();
const http = env.http;
const WORDS = Array.from({ length: 18 }, (_, i) => `w${i + 1}`);

/** Counts the page's reads of one job (GET /jobs/{id}), as the browser sends them. */
function countJobReads(page: Page, id: string): () => number {
  let reads = 0;
  page.on("request", (r) => {
    if (r.method() === "GET" && new URL(r.url()).pathname === `/jobs/${id}`) reads++;
  });
  return () => reads;
}

const chunk = (page: Page, seq: number) =>
  page.locator(`[data-testid="job-stream-tokens"] [data-testid="stream-chunk"][data-seq="${seq}"]`);

describe("the console, live", () => {
  it("shows a running llm-echo job's words as they are written, and its end, without polling the job meanwhile", async () => {
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    // Two seconds in SQS first: the page subscribes while the job is queued, as a user opening it would.
    const created = await http.call("POST", "/jobs", {
      kind: "llm-echo",
      payload: { text: WORDS.join(" "), delayMs: 300 },
      delaySeconds: 2,
    });
    const id = created.body.id as string;
    const reads = countJobReads(page, id);
    await page.goto(`${env.stack().url}/console/#/jobs/${id}`);
    await see(page.getByTestId("job-live-on"));
    // From the 5th word to the 16th: 11 gaps of 300 ms with no status change in them (the read
    // that `running` makes comes 250 ms after it, by the 2nd word). A 1 s poll would have read the
    // job at least twice; the subscription reads it not once.
    await see(chunk(page, 5), 2 * UI_MS);
    const before = reads();
    await see(chunk(page, 16));
    expect(reads() - before).toBe(0);
    // Its end, then the job read once for its result; the words whole and in order.
    await see(detailStatus(page, id, "done"), UI_MS);
    await see(page.getByTestId("job-result").filter({ hasText: '"chunks": 18' }));
    const shown = await page
      .locator('[data-testid="job-stream-tokens"] [data-testid="stream-chunk"]')
      .allTextContents();
    expect(shown.map((w) => w.trim())).toEqual(WORDS);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("falls back to polling, and says so, when the subscription can't be made", async () => {
    const { page } = await openConsole(`${env.stack().url}/console`);
    await page.route("**/jobs/*/subscriptions", (route) =>
      route.fulfill({
        status: 404,
        contentType: "application/json",
        body: JSON.stringify({
          error: { code: "not_found", message: "realtime is not configured on this stack" },
        }),
      }),
    );
    const created = await http.call("POST", "/jobs", {
      kind: "llm-echo",
      payload: { text: "one two three", delayMs: 500 },
    });
    const id = created.body.id as string;
    await page.goto(`${env.stack().url}/console/#/jobs/${id}`);
    await see(page.getByTestId("job-live-failed").filter({ hasText: "refreshing every second" }));
    await see(detailStatus(page, id, "done"), 2 * UI_MS);
    await page.close();
  });

  it("follows a pool queue's job through its subscription too: the pool publishes its runs", async () => {
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    const created = await http.call("POST", "/jobs", {
      kind: "node-digest",
      payload: { text: "followed", rounds: 2 },
      delaySeconds: 2,
    });
    const id = created.body.id as string;
    await page.goto(`${env.stack().url}/console/#/jobs/${id}`);
    await see(page.getByTestId("job-live-on"));
    await see(detailStatus(page, id, "done"), 2 * UI_MS);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("tails a queue: a new job's queued, running and done, newest first", async () => {
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    await page.getByTestId("queue-default").getByRole("link", { name: "default" }).click();
    await page.getByTestId("queue-tail-toggle").click();
    await see(page.locator('[data-testid="queue-tail"][data-state="tailing"]'));
    // A second's delay in SQS: no worker can claim it before its enqueue has published its queued.
    const created = await http.call("POST", "/jobs", {
      kind: "echo",
      payload: { tailed: true },
      delaySeconds: 1,
    });
    const id = created.body.id as string;
    const events = page.locator(`[data-testid="tail-event"][data-job-id="${id}"]`);
    await see(events.and(page.locator('[data-status="done"]')), 2 * UI_MS);
    expect(await events.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-status")))).toEqual([
      "done",
      "running",
      "queued",
    ]);
    await page.getByTestId("queue-tail-toggle").click();
    await see(page.locator('[data-testid="queue-tail"][data-state="off"]'));
    expect(problems).toEqual([]);
    await page.close();
  });
});
