import { build } from "esbuild";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { consoleBrowser } from "../../support/console-browser.ts";
import { blankPageServer, listeningPorts, portOf } from "../../support/emulator-ports.ts";
import { projectRoot } from "../../support/project-copy.ts";

/**
 * `@skyforge/client/realtime` in a real browser (Debian's chromium) on a page of another origin, as
 * a user's frontend is, against `npm start`: the client bundled for the browser by esbuild with no
 * polyfill, authenticated by its token alone; the same page's calls to the stack's HTTP API, token
 * or not, keep being refused.
 */
const env = consoleBrowser();
const realtimeUrl = () => {
  const m = /^ +realtime +(ws:\/\/127\.0\.0\.1:\d+\/mqtt)/m.exec(env.stack().output());
  if (!m) throw new Error(`no realtime url in the banner:\n${env.stack().output()}`);
  return m[1] as string;
};

describe("realtime from a browser page on another origin", () => {
  let bundle = "";
  let origin: Awaited<ReturnType<typeof blankPageServer>>;
  let page: Page | undefined;

  beforeAll(async () => {
    const out = await build({
      stdin: {
        contents: 'export { subscribe } from "./client/realtime.ts";',
        resolveDir: projectRoot,
        loader: "ts",
      },
      bundle: true,
      platform: "browser",
      format: "iife",
      globalName: "skyforgeRealtime",
      write: false,
      logLevel: "silent",
    });
    bundle = out.outputFiles[0]?.text ?? "";
    origin = await blankPageServer();
  }, 60_000);
  afterAll(() => origin?.close());
  afterEach(() => page?.close());

  async function openForeignPage(): Promise<Page> {
    page = await env.browser().newPage();
    await page.goto(origin.url);
    await page.addScriptTag({ content: bundle });
    return page;
  }

  it("is served on a loopback port of its own, and the stack listens on nothing else new", () => {
    const ports = listeningPorts(env.stack().pid);
    expect(ports.has(portOf(realtimeUrl().replace("ws:", "http:")))).toBe(true);
  });

  it("follows an llm-echo job to its end with the token alone", async () => {
    const created = await env.http.call("POST", "/jobs", {
      kind: "llm-echo",
      payload: { text: "alpha beta gamma delta", delayMs: 20 },
    });
    const sub = await env.http.call("POST", `/jobs/${created.body.id}/subscriptions`, {});
    expect(sub.body.url).toBe(realtimeUrl());
    const p = await openForeignPage();
    const seen = await p.evaluate(
      async ({ url, token }) => {
        const out: string[] = [];
        // biome-ignore lint/suspicious/noExplicitAny: the bundle's global, set by its script tag.
        const { subscribe } = (globalThis as any).skyforgeRealtime;
        for await (const event of subscribe({ url, token })) {
          if (event.type === "stream" && !event.closed) out.push(`${event.seq}:${event.chunk}`);
          if (event.type === "end") out.push(`end:${event.status}`);
        }
        return out;
      },
      { url: sub.body.url as string, token: sub.body.token as string },
    );
    expect(seen).toEqual(["1:alpha", "2:beta", "3:gamma", "4:delta", "end:done"]);
  });

  it("gets nothing from the HTTP API with the token: the page's calls are refused, the job untouched", async () => {
    const created = await env.http.call("POST", "/jobs", { kind: "sleep", payload: { ms: 60_000 } });
    const id = created.body.id as string;
    const sub = await env.http.call("POST", `/jobs/${id}/subscriptions`, {});
    const p = await openForeignPage();
    const answers = await p.evaluate(
      async ({ api, id, token }) => {
        const tries = [
          fetch(`${api}/jobs/${id}/cancel`, {
            method: "POST",
            headers: { authorization: `Bearer ${token}` },
          }),
          fetch(`${api}/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } }),
          fetch(`${api}/jobs/${id}/subscriptions`, { method: "POST", body: "{}" }),
        ];
        return Promise.all(tries.map((t) => t.then((r) => `status ${r.status}`).catch(() => "blocked")));
      },
      { api: env.stack().url, id, token: sub.body.token as string },
    );
    for (const answer of answers) expect(["blocked", "status 403"]).toContain(answer);
    const job = await env.http.call("GET", `/jobs/${id}`);
    expect(job.body.cancelRequested ?? false).toBe(false);
    expect(["queued", "running"]).toContain(job.body.status);
    await env.http.call("POST", `/jobs/${id}/cancel`);
  });
});
