import { mkdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import type { ApiRequest, Transport } from "../../client/transport.ts";
import { type ConsoleServer, startConsoleServer } from "../../console/serve.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * The web console in a real browser (Debian's chromium through playwright-core) against a real
 * `npm start`: served by the local stack at /console, and through console/serve.ts, the loopback
 * proxy `skyforge console --stage` runs, with a plain fetch transport standing in for SigV4.
 * Every wait is Playwright's own, bounded. The screenshot goes to $SKYFORGE_ARTIFACTS_DIR (default:
 * <tmp>/skyforge-artifacts); CONSOLE_SCREENSHOT=docs/console.png also writes the README's.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const artifacts = process.env.SKYFORGE_ARTIFACTS_DIR ?? join(tmpdir(), "skyforge-artifacts");
const UI_MS = 10_000;

let stack: StackProcess;
let browser: Browser;
const http = stackHttp(() => stack.url);

beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startStackProcess({ SKYFORGE_TICK_SECONDS: "1" }),
    chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await stack?.interrupt();
});

/** A page that records what went wrong in it: uncaught errors and failed loads. */
async function openConsole(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  // What the page showed when a step failed: the detail's error line usually says why.
  onTestFailed(async () => {
    if (!page.isClosed())
      console.error(`failure screenshot: ${await screenshot(page, "console-failure.png")}`);
  });
  await page.goto(url);
  await see(page.getByTestId("queue-state-default").filter({ hasText: "running" }));
  return { page, problems };
}

const see = (locator: Locator, timeout = UI_MS) => locator.waitFor({ state: "visible", timeout });
const detailStatus = (page: Page, id: string, status: string) =>
  page.locator(`[data-testid="job-detail"][data-job-id="${id}"] [data-testid="job-status"]`, {
    hasText: status,
  });

/** Fills the enqueue form and submits it; answers the new job's id, from the API's answer. */
async function enqueueThroughUi(
  page: Page,
  kind: string,
  payload: unknown,
  extra: { maxAttempts?: number; delay?: number } = {},
) {
  await page.getByTestId("enqueue-kind").fill(kind);
  await page.getByTestId("enqueue-payload").fill(JSON.stringify(payload));
  await page
    .getByTestId("enqueue-max-attempts")
    .fill(extra.maxAttempts === undefined ? "" : String(extra.maxAttempts));
  await page.getByTestId("enqueue-delay").fill(extra.delay === undefined ? "" : String(extra.delay));
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/jobs", {
      timeout: UI_MS,
    }),
    page.getByTestId("enqueue-submit").click(),
  ]);
  expect(answer.status()).toBe(201);
  const id = ((await answer.json()) as { id: string }).id;
  // The form opens the new job's detail.
  await see(page.locator(`[data-testid="job-detail"][data-job-id="${id}"]`));
  return id;
}

async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}

describe("the web console on npm start", () => {
  it(
    "enqueues, follows a job to done, cancels, retries a dead job, pauses and resumes a queue",
    async (ctx) => {
      const { page, problems } = await openConsole(`${stack.url}/console`);
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

      if (process.env.CONSOLE_SCREENSHOT) await dressForDocs(page);
      const shot = await screenshot(page, "console.png");
      await ctx.annotate(`screenshot: ${shot}`, "artifact");
      if (process.env.CONSOLE_SCREENSHOT) {
        const docs = resolve(process.env.CONSOLE_SCREENSHOT);
        mkdirSync(dirname(docs), { recursive: true });
        await page.screenshot({ path: docs, fullPage: true });
      }
      expect(problems).toEqual([]);
      await page.close();
    },
    process.env.CONSOLE_SCREENSHOT ? 120_000 : 60_000,
  );

  it("serves only its listed files, GET and HEAD, in the API's error shape otherwise", async () => {
    const head = await fetch(`${stack.url}/console/`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await head.text()).toBe("");
    const vendor = await fetch(`${stack.url}/console/vendor/uPlot.esm.js`);
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
      const r = await rawRequest(stack.url, "GET", path);
      expect([path, r.status, JSON.parse(r.body).error.code]).toEqual([path, 404, "not_found"]);
    }
    const post = await fetch(`${stack.url}/console/app.js`, { method: "POST", body: "x" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
    expect(((await post.json()) as { error: { code: string } }).error.code).toBe("method_not_allowed");
    expect((await http.call("GET", "/health")).status).toBe(200);
  });
});

/** A request sent as written (fetch would fold `..` and `//`), with any Host and Origin. */
function rawRequest(base: string, method: string, path: string, headers: Record<string, string> = {}) {
  const { hostname, port } = new URL(base);
  return new Promise<{ status: number; body: string }>((done, fail) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => done({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", fail);
    req.end();
  });
}

/** For the README's picture: traffic spread over 40 s in the chart (CONSOLE_SCREENSHOT only). */
async function dressForDocs(page: Page) {
  for (let batch = 0; batch < 3; batch++) {
    const jobs = Array.from({ length: 100 }, (_, i) => ({
      kind: "echo",
      payload: { i },
      delaySeconds: (i * 7 + batch * 13) % 40,
    }));
    expect((await http.call("POST", "/jobs/batch", { jobs })).status).toBe(200);
  }
  await http.call("POST", "/jobs", { kind: "sleep", payload: { ms: 30_000 } });
  await page.getByTestId("filter-queue").selectOption("");
  await page.getByTestId("filter-status").selectOption("");
  await see(page.getByTestId("chart-summary").filter({ hasText: /\b(2[89]\d|3\d\d) done/ }), 60_000);
}

describe("the console through console/serve.ts (the stage proxy)", () => {
  let proxy: ConsoleServer;
  const forwarded: string[] = [];
  beforeAll(async () => {
    proxy = await startConsoleServer({ transport: fetchTransport(() => stack.url, forwarded) });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("serves the same console and forwards its calls through the transport", async () => {
    expect(proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/$/);
    const { page, problems } = await openConsole(proxy.url);
    const id = await enqueueThroughUi(page, "echo", { via: "the proxy" });
    await see(detailStatus(page, id, "done"));
    await page.getByTestId("queue-toggle-heavy").click();
    await see(page.getByTestId("queue-state-heavy").filter({ hasText: "paused" }));
    await page.getByTestId("queue-toggle-heavy").click();
    await see(page.getByTestId("queue-state-heavy").filter({ hasText: "running" }));
    expect(forwarded).toEqual(
      expect.arrayContaining([
        "GET /queues",
        "POST /jobs",
        `GET /jobs/${id}`,
        "POST /queues/heavy/pause",
        "POST /queues/heavy/resume",
      ]),
    );
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it("refuses what is not its own page's request before anything is sent", async () => {
    const before = forwarded.length;
    const port = new URL(proxy.origin).port;
    const foreignOrigin = await rawRequest(proxy.origin, "POST", "/queues/default/pause", {
      origin: "http://evil.example",
      "content-type": "text/plain",
    });
    const rebound = await rawRequest(proxy.origin, "GET", "/queues", { host: `evil.example:${port}` });
    for (const r of [foreignOrigin, rebound]) {
      expect([r.status, JSON.parse(r.body).error.code]).toEqual([400, "validation_error"]);
    }
    expect(forwarded.length).toBe(before);
    expect((await rawRequest(proxy.origin, "GET", "/console/../package.json")).status).toBe(404);
    expect((await rawRequest(proxy.origin, "GET", "/")).status).toBe(302);
    const sameOrigin = await rawRequest(proxy.origin, "GET", "/jobs?limit=1&limit=2", {
      origin: proxy.origin,
    });
    expect([sameOrigin.status, JSON.parse(sameOrigin.body).error.code]).toEqual([400, "validation_error"]);
    expect(forwarded.at(-1)).toBe("GET /jobs");
  });
});

/** A plain fetch transport to npm start, standing in for the SigV4 one; it notes each request it sends. */
function fetchTransport(base: () => string, seen: string[]): Transport {
  return {
    async send({ method, path, query, body }: ApiRequest) {
      seen.push(`${method} ${path}`);
      const url = new URL(`${base()}${path}`);
      for (const [name, value] of Object.entries(query ?? {}))
        if (value !== undefined) url.searchParams.set(name, value);
      const res = await fetch(url, {
        method,
        ...(body === undefined
          ? {}
          : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
      });
      const text = await res.text();
      return {
        status: res.status,
        headers: Object.fromEntries(res.headers),
        body: text ? JSON.parse(text) : undefined,
      };
    },
  };
}
