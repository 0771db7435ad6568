import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTransport } from "../../client/http-transport.ts";
import { type ConsoleServer, startConsoleServer } from "../../console/serve.ts";
import {
  detailStatus,
  enqueueThroughUi,
  openConsole,
  REBOUND,
  rawRequest,
  recorded,
  see,
  UI_MS,
  useConsoleBrowser,
} from "../support/console-browser.ts";

/**
 * What keeps the console from being a way in: another site's page can't reach `npm start` (a
 * cross-site form POST, DNS rebinding), and console/serve.ts, the loopback proxy `skyforge console
 * --stage` runs, forwards only its own page's requests, through the client's SigV4 transport as the
 * CLI does (httpTransport; on loopback it signs with fixed local credentials).
 */
const env = useConsoleBrowser();
const http = env.http;

describe("the local stack against other sites", () => {
  it("a page of another site can't reach the stack: a cross-site form POST and DNS rebinding are refused", async () => {
    const page = await env.browser().newPage();
    // Another site's page that, once opened, posts a form to the stack: text/plain, no preflight.
    const target = `${env.stack().url}/queues/default/pause`;
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
    const rebound = await page.goto(`http://${REBOUND}:${new URL(env.stack().url).port}/jobs?limit=1`);
    expect([rebound?.status(), (await rebound?.json())?.error.code]).toEqual([400, "validation_error"]);
    await page.close();
  });
});

describe("the console through console/serve.ts (the stage proxy)", () => {
  let proxy: ConsoleServer;
  const forwarded: string[] = [];
  beforeAll(async () => {
    // What `skyforge console` forwards through: the client's SigV4 transport.
    proxy = await startConsoleServer({
      transport: recorded(httpTransport({ url: env.stack().url }), forwarded),
    });
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
