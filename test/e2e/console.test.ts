import { mkdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { type Browser, chromium, type Locator, type Page, type Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { httpTransport } from "../../client/http-transport.ts";
import type { ApiRequest, Transport } from "../../client/transport.ts";
import { type ConsoleServer, startConsoleServer } from "../../console/serve.ts";
import { type StackProcess, startStackProcess } from "../support/local-stack-process.ts";
import { stackHttp } from "../support/stack-http.ts";

/**
 * The web console in a real browser (Debian's chromium through playwright-core) against a real
 * `npm start`: served by the local stack at /console, and through console/serve.ts, the loopback
 * proxy `skyforge console --stage` runs, forwarding through the client's SigV4 transport as the CLI
 * does (httpTransport; on loopback it signs with fixed local credentials).
 * Every wait is Playwright's own, bounded. The screenshot goes to $SKYFORGE_ARTIFACTS_DIR (default:
 * <tmp>/skyforge-artifacts); CONSOLE_SCREENSHOT=docs/console.png also writes the README's.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const artifacts = process.env.SKYFORGE_ARTIFACTS_DIR ?? join(tmpdir(), "skyforge-artifacts");
const UI_MS = 10_000;
/** A name the browser resolves to 127.0.0.1, as a rebinding attacker's domain would. */
const REBOUND = "rebind.test";

let stack: StackProcess;
let browser: Browser;
const http = stackHttp(() => stack.url);

beforeAll(async () => {
  [stack, browser] = await Promise.all([
    startStackProcess({ SKYFORGE_TICK_SECONDS: "1" }),
    chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", `--host-resolver-rules=MAP ${REBOUND} 127.0.0.1`],
    }),
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

  it("an address that names no job (#/jobs/%) shows 'No such job' instead of a blank page", async () => {
    const { page, problems } = await openConsole(`${stack.url}/console/#/jobs/%`);
    await see(page.getByTestId("job-missing").filter({ hasText: "No such job" }));
    await page.getByTestId("job-close").click();
    await page.getByTestId("job-missing").waitFor({ state: "detached", timeout: UI_MS });
    // Reached later, by a link or by hand: the same.
    await page.evaluate('location.hash = "#/jobs/%E0%A4%A"');
    await see(page.getByTestId("job-missing").filter({ hasText: "%E0%A4%A" }));
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a change of filter never lets two polls of the job list overlap", async () => {
    const ALL = "/jobs?limit=50";
    const DEFAULT = "/jobs?queue=default&limit=50";
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
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

    await page.goto(`${stack.url}/console/`);
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

  it("a page of another site can't reach the stack: a cross-site form POST and DNS rebinding are refused", async () => {
    const page = await browser.newPage();
    // Another site's page that, once opened, posts a form to the stack: text/plain, no preflight.
    const target = `${stack.url}/queues/default/pause`;
    await page.route("http://evil.test/**", (route) =>
      route.fulfill({
        contentType: "text/html",
        body: `<form method="POST" action="${target}" enctype="text/plain"><input name="x" value="y"></form>
          <script>document.forms[0].submit()</script>`,
      }),
    );
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url() === target, { timeout: UI_MS }),
      page.goto("http://evil.test/"),
    ]);
    expect(answer.request().headers().origin).toBe("http://evil.test");
    expect([answer.status(), (await answer.json()).error.code]).toEqual([400, "validation_error"]);
    const queues = (await http.call("GET", "/queues")).body.items as { name: string; paused: boolean }[];
    expect(queues.find((q) => q.name === "default")?.paused).toBe(false);

    // The attacker's name, resolved to 127.0.0.1: the page would be the attacker's origin.
    const rebound = await page.goto(`http://${REBOUND}:${new URL(stack.url).port}/jobs?limit=1`);
    expect([rebound?.status(), (await rebound?.json())?.error.code]).toEqual([400, "validation_error"]);
    await page.close();
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
    // What `skyforge console` forwards through: the client's SigV4 transport.
    proxy = await startConsoleServer({ transport: recorded(httpTransport({ url: stack.url }), forwarded) });
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

  it("a failure inside the proxy is logged, and the browser told only 'internal error'", async () => {
    const logged: unknown[] = [];
    const broken = await startConsoleServer({
      transport: {
        send() {
          throw new Error("secret detail: arn:aws:iam::123456789012:role/operator");
        },
      },
      onError: (err) => logged.push(err),
    });
    try {
      const r = await rawRequest(broken.origin, "GET", "/queues");
      expect([r.status, JSON.parse(r.body)]).toEqual([
        500,
        { error: { code: "internal", message: "internal error" } },
      ]);
      expect(String(logged[0])).toContain("secret detail");
    } finally {
      await broken.close();
    }
  });
});

/** The transport, noting each request that goes through it. */
function recorded(transport: Transport, seen: string[]): Transport {
  return {
    send(request: ApiRequest) {
      seen.push(`${request.method} ${request.path}`);
      return transport.send(request);
    },
  };
}
