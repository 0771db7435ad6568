import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Request } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { httpTransport } from "../../../client/http-transport.ts";
import { TOKEN_HEADER } from "../../../console/console-token.ts";
import { type ConsoleServer, startConsoleServer } from "../../../console/serve.ts";
import {
  consoleBrowser,
  detailStatus,
  enqueueThroughUi,
  loopbackPage,
  openConsole,
  REBOUND,
  type RecordingUpstream,
  rawRequest,
  recorded,
  recordingUpstream,
  see,
  UI_MS,
} from "../../support/console-browser.ts";
import { skyforgeCli } from "../../support/skyforge-cli.ts";
import { waitFor } from "../../support/wait.ts";

/**
 * What keeps the console from being a way in: another site's page can't reach `npm start` (a
 * cross-site form POST, DNS rebinding), and console/serve.ts, the loopback proxy `skyforge console
 * --stage` runs, forwards only its own page's requests, through the client's SigV4 transport as the
 * CLI does (httpTransport; on loopback it signs with fixed local credentials): those that carry the
 * token of its printed address, from its own page or the person at the keyboard. The printed
 * address itself is opened as `npx skyforge console` prints it, in chromium.
 */
const env = consoleBrowser();
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
    expect([answer.status(), (await answer.json()).error.code]).toEqual([403, "forbidden"]);
    const queues = (await http.call("GET", "/queues")).body.items as { name: string; paused: boolean }[];
    expect(queues.find((q) => q.name === "default")?.paused).toBe(false);

    // The attacker's name, resolved to 127.0.0.1: the page would be the attacker's origin.
    const rebound = await page.goto(`http://${REBOUND}:${new URL(env.stack().url).port}/jobs?limit=1`);
    expect([rebound?.status(), (await rebound?.json())?.error.code]).toEqual([403, "forbidden"]);
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
    expect(proxy.url).toBe(`${proxy.origin}/console/#token=${proxy.token}`);
    expect(proxy.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits, base64url
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
      expect([r.status, JSON.parse(r.body).error.code]).toEqual([403, "forbidden"]);
    }
    expect(forwarded.length).toBe(before);
    expect((await rawRequest(proxy.origin, "GET", "/console/../package.json")).status).toBe(404);
    expect((await rawRequest(proxy.origin, "GET", "/")).status).toBe(302);
    const sameOrigin = await rawRequest(proxy.origin, "GET", "/jobs?limit=1&limit=2", {
      origin: proxy.origin,
      [TOKEN_HEADER]: proxy.token,
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
      const r = await rawRequest(broken.origin, "GET", "/queues", { [TOKEN_HEADER]: broken.token });
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

describe("npx skyforge console", () => {
  const work = mkdtempSync(join(tmpdir(), "skyforge-console-cli-"));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it("prints an address with a token in its fragment; the page opened at it works, and after a reload", async () => {
    const cli = skyforgeCli(() => env.stack().url, work).start(["console"]);
    try {
      const printed = await waitFor(
        async () => /^console: (\S+)$/m.exec(cli.stdout())?.[1],
        "the console to print its address",
        30_000,
      );
      expect(printed).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/console\/#token=[A-Za-z0-9_-]{43}$/);
      const { origin } = new URL(printed);
      const { page, problems } = await openConsole(printed);
      // The token left the address bar, and the page's calls carry it.
      expect(page.url()).toBe(`${origin}/console/`);
      const [pause] = await Promise.all([
        page.waitForRequest((r) => r.url() === `${origin}/queues/heavy/pause`, { timeout: UI_MS }),
        page.getByTestId("queue-toggle-heavy").click(),
      ]);
      expect(pause.headers()[TOKEN_HEADER]).toBe(printed.split("#token=")[1]);
      await see(page.getByTestId("queue-state-heavy").filter({ hasText: "paused" }));
      // A reload keeps working: the tab kept the token.
      await page.reload();
      await see(page.getByTestId("queue-state-heavy").filter({ hasText: "paused" }));
      await page.getByTestId("queue-toggle-heavy").click();
      await see(page.getByTestId("queue-state-heavy").filter({ hasText: "running" }));
      expect(problems).toEqual([]);
      // The same address without the fragment (another tab, another user) is turned away.
      const other = await env.browser().newPage();
      await other.goto(`${origin}/console/`);
      await see(other.getByTestId("connection").filter({ hasText: "unauthorized" }));
      await other.close();
      await page.close();
      cli.interrupt("pid");
      expect(await cli.exit()).toBe(0);
    } finally {
      cli.kill();
    }
  }, 60_000);
});

describe("the stage proxy's token, against a stand-in API that records what reaches it", () => {
  let upstream: RecordingUpstream;
  let proxy: ConsoleServer;
  beforeAll(async () => {
    upstream = await recordingUpstream();
    proxy = await startConsoleServer({ transport: httpTransport({ url: upstream.url }) });
  });
  afterAll(async () => {
    await proxy?.close();
    await upstream?.close();
  });
  beforeEach(() => {
    upstream.seen.length = 0;
  });
  const send = (method: string, path: string, headers: Record<string, string> = {}) =>
    rawRequest(proxy.origin, method, path, headers);
  const refusal = (r: { status: number; body: string }) => [r.status, JSON.parse(r.body).error.code];

  it("a call without this run's token, or with another, is a 401 and nothing is forwarded", async () => {
    // Another local user's curl: no token at all.
    expect(refusal(await send("POST", "/queues/default/pause"))).toEqual([401, "unauthorized"]);
    expect(refusal(await send("GET", "/queues"))).toEqual([401, "unauthorized"]);
    // A guess of the same length, and one of another length.
    const wrong = `${proxy.token.slice(0, -1)}${proxy.token.endsWith("A") ? "B" : "A"}`;
    expect(wrong).toHaveLength(proxy.token.length);
    for (const token of [wrong, proxy.token.slice(1), `${proxy.token}A`, ""]) {
      const r = await send("POST", "/queues/default/pause", { [TOKEN_HEADER]: token });
      expect([token, ...refusal(r)]).toEqual([token, 401, "unauthorized"]);
    }
    expect(upstream.seen).toEqual([]);
    // The files still load without it: the page must, to read the token from its address.
    expect((await send("GET", "/console/app.js")).status).toBe(200);
    // With it, the call goes through.
    expect((await send("GET", "/queues", { [TOKEN_HEADER]: proxy.token })).status).toBe(200);
    expect(upstream.seen).toEqual(["GET /queues"]);
  });

  it("a call another page made (Sec-Fetch-Site cross-site or same-site) is a 403, even with the token", async () => {
    for (const site of ["cross-site", "same-site", "Cross-Site"]) {
      const r = await send("POST", "/queues/default/pause", {
        [TOKEN_HEADER]: proxy.token,
        "sec-fetch-site": site,
      });
      expect([site, ...refusal(r)]).toEqual([site, 403, "forbidden"]);
    }
    expect(upstream.seen).toEqual([]);
    for (const site of ["same-origin", "none"]) {
      const r = await send("GET", "/queues", { [TOKEN_HEADER]: proxy.token, "sec-fetch-site": site });
      expect([site, r.status]).toEqual([site, 200]);
    }
    expect(upstream.seen).toEqual(["GET /queues", "GET /queues"]);
  });

  it("an <img> on another site's page pointing at the proxy sends nothing on", async () => {
    // A GET sends no Origin, so only the token and Sec-Fetch-Site stand in its way.
    const target = `${proxy.origin}/queues/default/pause`;
    // The page's own host in the query, so the second page's image is not the first one's, cached.
    const elsewhere = await loopbackPage(
      `<script>document.write('<img src="${target}?from=' + location.hostname + '">')</script>`,
    );
    const page = await env.browser().newPage();
    // Each image request as it ended: answered, or answered and then hidden from the page (a JSON
    // answer to an image is ERR_BLOCKED_BY_ORB), but not lost on the way.
    const ended: [Request, string][] = [];
    const note = (end: (r: Request) => string) => (r: Request) => {
      if (r.url().startsWith(`${target}?from=`)) ended.push([r, end(r)]);
    };
    page.on(
      "requestfinished",
      note(() => "answered"),
    );
    page.on(
      "requestfailed",
      note((r) => (r.failure()?.errorText === "net::ERR_BLOCKED_BY_ORB" ? "answered" : "lost")),
    );
    try {
      await page.goto(`http://${REBOUND}:${elsewhere.port}/`);
      await expect.poll(() => ended.length, { timeout: UI_MS }).toBe(1);
      await page.goto(`http://127.0.0.1:${elsewhere.port}/`);
      await expect.poll(() => ended.length, { timeout: UI_MS }).toBe(2);
      // Both reached the proxy (an image sends no Origin, and Sec-Fetch-Site cross-site and
      // same-site), which answered them without forwarding anything.
      expect(ended.map(([r, end]) => [new URL(r.url()).search, end])).toEqual([
        [`?from=${REBOUND}`, "answered"],
        ["?from=127.0.0.1", "answered"],
      ]);
      expect(upstream.seen).toEqual([]);
    } finally {
      await page.close();
      await elsewhere.close();
    }
  });

  it("query names are only names: ?constructor=x and ?__proto__=y arrive as x and y", async () => {
    const r = await send("GET", "/jobs?constructor=x&__proto__=y&limit=1&limit=2", {
      [TOKEN_HEADER]: proxy.token,
    });
    expect(r.status).toBe(200);
    expect(upstream.seen).toHaveLength(1);
    const query = new URL(upstream.seen[0]?.split(" ")[1] ?? "", upstream.url).searchParams;
    expect([...query]).toEqual([
      ["__proto__", "y"],
      ["constructor", "x"],
      ["limit", "1,2"],
    ]);
  });
});
