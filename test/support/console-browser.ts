import { mkdirSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, expect, onTestFailed } from "vitest";
import type { ApiRequest, Transport } from "../../client/transport.ts";
import { type StackProcess, startStackProcess } from "./local-stack-process.ts";
import { stackHttp } from "./stack-http.ts";

/**
 * The web console in a real browser (Debian's chromium through playwright-core) against a real
 * `npm start`, for the browser tests (test/e2e/browser.test.ts and the files it imports):
 * `useConsoleBrowser()` starts both for the test file and stops them after, `consoleBrowser()` reads
 * them from the files it imports. Every wait is Playwright's own, bounded. Screenshots go to
 * $SKYFORGE_ARTIFACTS_DIR (default: <tmp>/skyforge-artifacts).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const artifacts = process.env.SKYFORGE_ARTIFACTS_DIR ?? join(tmpdir(), "skyforge-artifacts");
export const UI_MS = 10_000;
/** A name the browser resolves to 127.0.0.1, as a rebinding attacker's domain would. */
export const REBOUND = "rebind.test";

let stack: StackProcess | undefined;
let browser: Browser | undefined;

/** Starts npm start and chromium for this test file (once a file: they are the file's to share). */
export function useConsoleBrowser(): ConsoleBrowser {
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
    [stack, browser] = [undefined, undefined];
  });
  return consoleBrowser();
}

/** The stack and browser `useConsoleBrowser()` started, read once started (from a test or a hook). */
export function consoleBrowser(): ConsoleBrowser {
  return {
    stack: () => started(stack),
    browser: () => started(browser),
    http: stackHttp(() => started(stack).url),
  };
}

export interface ConsoleBrowser {
  stack: () => StackProcess;
  browser: () => Browser;
  http: ReturnType<typeof stackHttp>;
}

function started<T>(it: T | undefined): T {
  if (!it)
    throw new Error("npm start and chromium are not running: useConsoleBrowser() starts them for the file");
  return it;
}

/** A page that records what went wrong in it: uncaught errors and failed loads. */
export async function openConsole(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await started(browser).newPage({ viewport: { width: 1400, height: 1000 } });
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

export const see = (locator: Locator, timeout = UI_MS) => locator.waitFor({ state: "visible", timeout });
export const detailStatus = (page: Page, id: string, status: string) =>
  page.locator(`[data-testid="job-detail"][data-job-id="${id}"] [data-testid="job-status"]`, {
    hasText: status,
  });

/** Fills the enqueue form and submits it; answers the new job's id, from the API's answer. */
export async function enqueueThroughUi(
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

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifacts, { recursive: true });
  const path = join(artifacts, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** A request sent as written (fetch would fold `..` and `//`), with any Host and Origin. */
export function rawRequest(base: string, method: string, path: string, headers: Record<string, string> = {}) {
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

/** The transport, noting each request that goes through it. */
export function recorded(transport: Transport, seen: string[]): Transport {
  return {
    send(request: ApiRequest) {
      seen.push(`${request.method} ${request.path}`);
      return transport.send(request);
    },
  };
}

export interface RecordingUpstream {
  /** Its address, for a transport: http://127.0.0.1:<port> */
  url: string;
  /** "METHOD /path?query" of each request that reached it, as it arrived. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * A loopback stand-in for a stage's API: notes every request that reaches it and answers
 * `{ "items": [] }`, so a test can see exactly what a proxy forwarded (and that it forwarded nothing).
 */
export async function recordingUpstream(): Promise<RecordingUpstream> {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ items: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Another site's page, served from loopback as a local dev server would serve it (Chromium lets a
 * page reach 127.0.0.1 only from a private or loopback address): opened as http://127.0.0.1:<port>/
 * it is same-site with anything on 127.0.0.1, as http://${REBOUND}:<port>/ cross-site.
 */
export async function loopbackPage(html: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
