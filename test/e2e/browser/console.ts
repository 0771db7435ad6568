import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import type { Page, Route } from "playwright-core";
import { describe, expect, it } from "vitest";
import {
  consoleBrowser,
  detailStatus,
  enqueueThroughUi,
  openConsole,
  rawRequest,
  screenshot,
  see,
  UI_MS,
} from "../../support/console-browser.ts";

/**
 * The web console in a real browser against a real `npm start` (test/support/console-browser.ts):
 * served by the local stack at /console. Every run rewrites the README's picture, docs/console.png
 * (docsPicture, below). The stage proxy and the cross-site refusals are in console-security.ts.
 */
const env = consoleBrowser();
const http = env.http;

describe("the web console on npm start", () => {
  it("enqueues, follows a job to done, cancels, retries a dead job, pauses and resumes a queue", async (ctx) => {
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    await see(page.getByTestId("schedule-heartbeat-echo"));

    // Enqueue through the UI; the detail follows the job to done, and the list shows it done.
    const echoId = await enqueueThroughUi(page, "echo", { from: "the console test" });
    await see(detailStatus(page, echoId, "done"));
    expect(await page.getByTestId("job-result").textContent()).toContain("the console test");
    await page.getByTestId("filter-queue").selectOption("default");
    await page.getByTestId("filter-status").selectOption("done");
    await see(page.locator(`[data-testid="job-row-${echoId}"][data-status="done"]`));
    await see(page.getByTestId("chart-summary").filter({ hasText: /[1-9]\d* done/ }));

    // A job far in the future is scheduled, and Cancel ends it.
    const laterId = await enqueueThroughUi(page, "echo", { later: true }, { delay: 1200 });
    await see(detailStatus(page, laterId, "scheduled"));
    await page.getByTestId("job-cancel").click();
    await see(detailStatus(page, laterId, "cancelled"));
    await see(page.getByTestId("job-action-message").filter({ hasText: "cancel: cancelled" }));

    // `fail` always throws: with one attempt it is dead at once.
    const failId = await enqueueThroughUi(
      page,
      "fail",
      { message: "boom from the console test" },
      { maxAttempts: 1 },
    );
    await see(detailStatus(page, failId, "dead"));
    await see(page.getByTestId("job-last-error").filter({ hasText: "boom from the console test" }));

    // Pause: the queue says so, and a retried job waits in it, queued, instead of running.
    await page.getByTestId("queue-toggle-default").click();
    await see(page.getByTestId("queue-state-default").filter({ hasText: "paused" }));
    await see(page.getByTestId("queue-toggle-default").filter({ hasText: "Resume" }));

    // Retry from the dead job's detail, reached from the list.
    await page.getByTestId("job-close").click();
    await page.getByTestId("filter-status").selectOption("dead");
    await page.getByTestId(`job-row-${failId}`).click();
    await see(detailStatus(page, failId, "dead"));
    await page.getByTestId("job-retry").click();
    await see(detailStatus(page, failId, "queued"));
    await see(page.getByTestId("job-attempts").filter({ hasText: "0 / 1" }));
    await see(page.getByTestId("queue-visible-default").filter({ hasText: /[1-9]/ }));

    // Resume: the retried job runs again (and, being `fail`, dies again after its one attempt).
    await page.getByTestId("queue-toggle-default").click();
    await see(page.getByTestId("queue-state-default").filter({ hasText: "running" }));
    await see(detailStatus(page, failId, "dead"));
    await see(page.getByTestId("job-attempts").filter({ hasText: "1 / 1" }));
    expect((await http.call("GET", `/jobs/${failId}`)).body).toMatchObject({ status: "dead", attempts: 1 });

    const shot = await screenshot(page, "console.png");
    await ctx.annotate(`screenshot: ${shot}`, "artifact");
    await docsPicture(page, [echoId, laterId, failId]);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("lists the newest jobs first, and a done job's earlier failure is in its history, not its error", async () => {
    const made = await http.call("POST", "/jobs/batch", {
      jobs: [1, 2, 3].map((i) => ({ kind: "echo", payload: { order: i } })),
    });
    const echoes: string[] = made.body.results.map((r: { id: string }) => r.id);
    // flaky throws on its first attempt and succeeds on its second.
    const flaky = (await http.call("POST", "/jobs", { kind: "flaky", payload: { failTimes: 1 } })).body.id;
    const { page, problems } = await openConsole(`${env.stack().url}/console/#/jobs/${flaky}`);
    await see(detailStatus(page, flaky, "done"), 30_000);
    const job = (await http.call("GET", `/jobs/${flaky}`)).body;
    expect(job).toMatchObject({
      status: "done",
      attempts: 2,
      lastError: expect.stringContaining("flaky: attempt 1"),
    });
    // Done: no "Error" of its own; the first attempt's error is where the history is, the timeline.
    expect(await page.getByTestId("job-last-error").count()).toBe(0);
    expect(await page.getByTestId("job-earlier-error").count()).toBe(0);
    await see(
      page
        .getByTestId("timeline-entry")
        .filter({ hasText: "flaky: attempt 1 of 1 planned failures" })
        .first(),
    );

    // The list: every row's job created no earlier than the row below it.
    await page.getByTestId("filter-queue").selectOption("default");
    await page.getByTestId("filter-status").selectOption("done");
    for (const id of [...echoes, flaky]) await see(page.getByTestId(`job-row-${id}`), 20_000);
    const rows = await page
      .locator('tr[data-testid^="job-row-"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")?.replace("job-row-", "") ?? ""));
    const created = await Promise.all(
      rows.map(async (id) => (await http.call("GET", `/jobs/${id}`)).body.createdAt as string),
    );
    expect(created).toEqual([...created].sort().reverse());
    expect(rows.indexOf(flaky)).toBeLessThan(rows.indexOf(echoes[0] as string));
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("searches the job list by tag from its search box, the filters in the address, newest first", async () => {
    const tag = `console-${randomUUID().slice(0, 8)}`;
    const made = await http.call("POST", "/jobs/batch", {
      jobs: [
        { kind: "echo", payload: 1, tags: [tag] },
        { kind: "echo", payload: 2, tags: [`${tag}-other`] },
        { kind: "echo", payload: 3, tags: ["x", tag] },
      ],
    });
    expect(made.status).toBe(200);
    const [first, other, last] = made.body.results.map((r: { id: string }) => r.id) as string[];
    const rowIds = (page: Page) =>
      page
        .locator('tr[data-testid^="job-row-"]')
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-testid")?.replace("job-row-", "") ?? ""));

    // Typed into the box: the list is the tag's jobs, newest first, and the address carries the search.
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    await page.getByTestId("search-tag").fill(tag);
    await page.getByTestId("search-submit").click();
    await see(page.getByTestId(`job-row-${last}`), 20_000);
    await see(page.getByTestId(`job-row-${first}`));
    await see(page.getByTestId("jobs-count").filter({ hasText: "2 on this page" }));
    // Newest first: by creation time, then by id (a batch's jobs may share a millisecond).
    const views = await Promise.all(
      [first, last].map(
        async (id) => (await http.call("GET", `/jobs/${id}`)).body as { id: string; createdAt: string },
      ),
    );
    const newestFirst = views
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))
      .map((j) => j.id);
    expect(await rowIds(page)).toEqual(newestFirst);
    expect(await page.getByTestId(`job-row-${other}`).count()).toBe(0);
    expect(new URL(page.url()).hash).toBe(`#/?tag=${tag}`);

    // Picking a job keeps the search in the address; a kind none of them has empties the list.
    await page.getByTestId(`job-row-${first}`).click();
    await see(detailStatus(page, first as string, "done"));
    expect(new URL(page.url()).hash).toBe(`#/jobs/${first}?tag=${tag}`);
    await page.getByTestId("search-kind").fill("fail");
    await page.getByTestId("search-submit").click();
    await see(page.getByTestId("jobs-empty"));
    expect(new URL(page.url()).hash).toBe(`#/jobs/${first}?tag=${tag}&kind=fail`);

    // The address alone opens the same search: a link to it is the search.
    const linked = await openConsole(`${env.stack().url}/console#/?tag=${tag}&status=done`);
    await see(linked.page.getByTestId(`job-row-${last}`), 20_000);
    await see(linked.page.getByTestId("jobs-count").filter({ hasText: "2 on this page" }));
    expect(await linked.page.getByTestId("search-tag").inputValue()).toBe(tag);
    expect([...problems, ...linked.problems]).toEqual([]);
    await linked.page.close();
    await page.close();
  }, 60_000);

  it("selects two dead jobs, replays them, and links the new jobs, each naming its original", async () => {
    const message = `replay me ${randomUUID()}`;
    const made = await http.call("POST", "/jobs/batch", {
      jobs: [1, 2].map(() => ({ kind: "fail", payload: { message }, maxAttempts: 1 })),
    });
    expect(made.status).toBe(200);
    const dead: string[] = made.body.results.map((r: { id: string }) => r.id);
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    await page.getByTestId("filter-queue").selectOption("default");
    await page.getByTestId("filter-status").selectOption("dead");
    // Only ended jobs can be picked; picking one doesn't open its detail.
    for (const id of dead) {
      await see(page.locator(`[data-testid="job-row-${id}"][data-status="dead"]`), 20_000);
      await page.getByTestId(`job-pick-${id}`).check();
    }
    await see(page.getByTestId("replay-count").filter({ hasText: "2 selected" }));
    expect(await page.getByTestId("job-detail").count()).toBe(0);
    await page.getByTestId("replay-selected").click();
    await see(page.getByTestId("replay-summary").filter({ hasText: "replayed 2:" }));
    const links = page.getByTestId("replay-new-job");
    expect(await links.count()).toBe(2);
    expect(await page.getByTestId("replay-count").textContent()).toBe("");
    const fresh = await Promise.all(
      [0, 1].map(async (i) => ((await links.nth(i).getAttribute("href")) ?? "").replace("#/jobs/", "")),
    );
    for (const id of fresh) {
      const replay = await http.call("GET", `/jobs/${id}`);
      expect(dead).toContain(replay.body.replayOf);
      expect(replay.body).toMatchObject({ kind: "fail", maxAttempts: 1 });
    }
    // A link opens the new job, which names the job it replays; the originals stay dead.
    await links.nth(0).click();
    await see(page.locator(`[data-testid="job-detail"][data-job-id="${fresh[0]}"]`));
    await see(page.getByTestId("job-replay-of").filter({ hasText: /^01/ }));
    expect(dead).toContain(await page.getByTestId("job-replay-of").textContent());
    for (const id of dead) expect((await http.call("GET", `/jobs/${id}`)).body.status).toBe("dead");
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("serves only its listed files, GET and HEAD, in the API's error shape otherwise", async () => {
    const head = await fetch(`${env.stack().url}/console/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await head.text()).toBe("");
    const vendor = await fetch(`${env.stack().url}/console/vendor/uPlot.esm.js`);
    expect([vendor.status, vendor.headers.get("content-type")]).toEqual([
      200,
      "text/javascript; charset=utf-8",
    ]);
    for (const path of [
      "/console/../package.json",
      "/console/%2e%2e/package.json",
      "/console//app.js",
      "/console/serve.ts",
    ]) {
      const r = await rawRequest(env.stack().url, "GET", path);
      expect([path, r.status, JSON.parse(r.body).error.code]).toEqual([path, 404, "not_found"]);
    }
    const post = await fetch(`${env.stack().url}/console/app.js`, { method: "POST", body: "x" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    expect((await http.call("GET", "/health")).status).toBe(200);
  });

  it("an address that names no job (#/jobs/%) shows 'No such job' instead of a blank page", async () => {
    const { page, problems } = await openConsole(`${env.stack().url}/console/#/jobs/%`);
    await see(page.getByTestId("job-missing").filter({ hasText: "No such job" }));
    await page.getByTestId("job-close").click();
    await page.getByTestId("job-missing").waitFor({ state: "detached", timeout: UI_MS });
    // Reached later, by a link or by hand: the same.
    await page.evaluate('location.hash = "#/jobs/%E0%A4%A"');
    await see(page.getByTestId("job-missing").filter({ hasText: "%E0%A4%A" }));
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a queue's view lists its busiest flow keys: a flooded tenant of tenant-echo, until its line drains", async () => {
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    await see(page.getByTestId("queue-state-default").filter({ hasText: "running" }));
    await page.getByTestId("queue-default").getByRole("link", { name: "default" }).click();
    await see(page.getByTestId("busiest-keys").filter({ hasText: "default" }));

    // tenant-echo runs 2 at once for a plain tenant: 30 jobs of 300 ms keep a line for about 4 s.
    const tenant = `flood-${randomUUID()}`;
    const jobs = Array.from({ length: 30 }, (_, seq) => ({
      kind: "tenant-echo",
      payload: { tenant, seq, sleepMs: 300 },
    }));
    expect((await http.call("POST", "/jobs/batch", { jobs })).status).toBe(200);
    const row = page.getByTestId(`key-row-tenant-echo-${tenant}`);
    await see(row);
    expect(await row.getByTestId("key-running").textContent()).toMatch(/^[0-2] \/ 2$/);
    expect(Number(await row.getByTestId("key-waiting").textContent())).toBeGreaterThan(0);
    // Refreshed with the queue's other live data: once the line drains, the row goes.
    await row.waitFor({ state: "detached", timeout: 30_000 });
    await see(page.getByTestId("keys-empty"));
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it("a parked job says which key it waits for, in the list and in its detail", async () => {
    const tenant = `parked-${randomUUID().slice(0, 8)}`;
    const enqueue = async (sleepMs: number) =>
      (await http.call("POST", "/jobs", { kind: "tenant-echo", payload: { tenant, sleepMs } })).body
        .id as string;
    // Two long runs hold the tenant's two places; the third waits in its line until one ends.
    const holders = [await enqueue(10_000), await enqueue(10_000)];
    const parked = await enqueue(0);
    try {
      await expect
        .poll(async () => (await http.call("GET", `/jobs/${parked}`)).body.waitingForKey, { timeout: UI_MS })
        .toBe(true);
      const { page, problems } = await openConsole(`${env.stack().url}/console`);
      const row = page.getByTestId(`job-row-${parked}`);
      await see(row.getByTestId("job-row-waiting").filter({ hasText: `waiting for key ${tenant}` }));
      expect(await row.getByTestId("job-row-status").textContent()).toBe("queued");
      await row.click();
      await see(page.getByTestId("job-waiting-key").filter({ hasText: `waiting for key ${tenant}` }));
      await see(detailStatus(page, parked, "queued"));
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      for (const id of [parked, ...holders]) await http.call("POST", `/jobs/${id}/cancel`);
    }
  }, 60_000);

  it("a change of filter never lets two polls of the job list overlap", async () => {
    const ALL = "/jobs?limit=50";
    const DEFAULT = "/jobs?queue=default&limit=50";
    const page = await env.browser().newPage({ viewport: { width: 1400, height: 1000 } });
    // The page's calls to each URL, counted as the page makes them (the interval's call is made
    // inside runFor, before the answer to anything else can come).
    await page.addInitScript(`
      const started = (window.started = {});
      const real = window.fetch.bind(window);
      window.fetch = (input, init) => {
        started[String(input)] = (started[String(input)] ?? 0) + 1;
        return real(input, init);
      };
    `);
    await page.clock.install(); // the polls' timers run only when the test says
    // The job list's calls are held until the test lets each one through.
    const held: { path: string; route: Route }[] = [];
    await page.route(
      (url) => url.pathname === "/jobs" && url.searchParams.get("limit") === "50",
      (route) => {
        const url = new URL(route.request().url());
        held.push({ path: `${url.pathname}${url.search}`, route });
      },
    );
    const started = (path: string) => page.evaluate<number>(`window.started[${JSON.stringify(path)}] ?? 0`);
    const release = async (path: string) => {
      const at = held.findIndex((h) => h.path === path);
      const [h] = held.splice(at, 1);
      if (!h) throw new Error(`no call to ${path} is held`);
      const request = h.route.request();
      await Promise.all([page.waitForEvent("requestfinished", (r) => r === request), h.route.continue()]);
    };
    // One turn of the page's event loop (MessageChannel is not among the faked timers), then 2 s.
    const tick = async () => {
      await page.evaluate(`new Promise((done) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => done();
        channel.port2.postMessage(null);
      })`);
      await page.clock.runFor(2_000);
    };

    await page.goto(`${env.stack().url}/console/`);
    await see(page.getByTestId("queue-state-default").filter({ hasText: "running" }));
    await expect.poll(() => held.map((h) => h.path), { timeout: UI_MS }).toEqual([ALL]);
    await page.getByTestId("filter-queue").selectOption("default");
    await expect.poll(() => held.map((h) => h.path), { timeout: UI_MS }).toEqual([ALL, DEFAULT]);

    // The old filter's call ends while the new one's is still out: the timer must keep waiting.
    await release(ALL);
    for (let i = 0; i < 4; i++) await tick();
    expect(await started(DEFAULT)).toBe(1);

    // Once the new filter's call is answered, the timer polls again.
    await release(DEFAULT);
    await expect
      .poll(
        async () => {
          await tick();
          return started(DEFAULT);
        },
        { timeout: UI_MS },
      )
      .toBe(2);
    await page.unrouteAll({ behavior: "ignoreErrors" });
    await page.close();
  });
});

/** The README's picture, rewritten by every run of this test so it can't go stale. */
const DOCS_PICTURE = fileURLToPath(new URL("../../../docs/console.png", import.meta.url));

/**
 * docs/console.png: the page as the test leaves it, listing the test's three jobs (done, cancelled,
 * dead) with the dead one open. What differs from run to run is made the same before the shot: ids,
 * times and durations read as fixed placeholders, the chart's time series is masked, and the queues
 * are drained; so a run changes the committed file only when the console's look does.
 */
async function docsPicture(page: Page, jobs: string[]): Promise<void> {
  await page.getByTestId("filter-queue").selectOption("default");
  await page.getByTestId("filter-status").selectOption("");
  for (const id of jobs) await see(page.getByTestId(`job-row-${id}`));
  for (const count of ["visible", "inFlight", "delayed"])
    await see(page.getByTestId(`queue-${count}-default`).filter({ hasText: /^\s*0\s*$/ }), 20_000);
  // The same text every run, the page's own layout around it; the next poll that changes anything
  // would put the real text back, so the shot is taken at once.
  await page.evaluate(`(() => {
    const set = (selector, text) => document.querySelectorAll(selector).forEach((el) => { el.textContent = text; });
    set('[data-testid="connection"]', "live · updated 1 s ago");
    set('[data-testid="target"]', "127.0.0.1:3000");
    set('[data-testid="enqueue-job-link"], [data-testid="job-detail"] h2 .mono', "01JB7Q0EXAMPLE0000000000000");
    set('[data-testid="jobs"] td.mono a', "01JB7Q0E…");
    set('[data-testid="jobs"] tbody td:nth-child(7), [data-testid="job-timeline"] .mono', "12:00:00");
    set('[data-testid="jobs"] tbody td:nth-child(n+8), [data-testid="job-timeline"] .muted:not(.mono):not(.small)', "12 ms");
    document.querySelectorAll('[data-testid="job-timeline"] .small').forEach((el) => {
      el.textContent = el.textContent.replace(/\\d+(\\.\\d+)?\\s*(ms|s)\\b/g, "12 ms").replace(/:\\d+\\b/g, ":4242");
    });
    set('[data-testid="job-detail"] .facts dd:not([data-testid="job-attempts"])', "2026-01-01 12:00:00");
    set('[data-testid="schedules"] tbody td:nth-child(4), [data-testid="schedules"] tbody td:nth-child(5)', "12:05:00");
    set('[data-testid="chart-summary"]', "");
  })()`);
  await page.mouse.move(0, 0);
  await page.screenshot({
    path: DOCS_PICTURE,
    fullPage: true,
    animations: "disabled",
    caret: "hide",
    mask: [page.locator('[data-testid="chart"] .uplot')],
    maskColor: "#f1f5f9",
  });
}
