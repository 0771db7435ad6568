import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpTransport } from "../../../client/http-transport.ts";
import { type ConsoleServer, startConsoleServer } from "../../../console/serve.ts";
import {
  consoleBrowser,
  detailStatus,
  enqueueThroughUi,
  openConsole,
  recorded,
  see,
} from "../../support/console-browser.ts";

/**
 * A durable job's page in the web console (console/durable-steps.js), in a real browser against a
 * real `npm start`: the steps in order, the wait (a sleep, then a token), the token completed from
 * the page, and the job done; then the same through the stage proxy (console/serve.ts), whose
 * forwarded call carries the token's secret and nothing else changes. Every wait is Playwright's,
 * bounded.
 */
const env = consoleBrowser();
const http = env.http;

const step = (page: import("playwright-core").Page, name: string, status: string) =>
  page.locator(`[data-testid="step-${name}"][data-status="${status}"]`);

describe("a durable job in the web console", () => {
  it("onboard: its steps, its sleep then its token wait; Complete token from the page; done", async () => {
    const { page, problems } = await openConsole(`${env.stack().url}/console`);
    const user = `console-${randomUUID().slice(0, 8)}`;
    const id = await enqueueThroughUi(page, "onboard", { user, sleepSeconds: 1 });

    await see(page.locator('[data-testid="job-waiting"][data-waiting-for="token"]'), 20_000);
    await see(detailStatus(page, id, "scheduled"));
    // Two runs, each ended by a wait that gave its attempt back: the count and the timeline agree.
    const runs = page.locator('[data-testid="timeline-entry"][data-what="attempt"]');
    await see(page.getByTestId("job-attempts").filter({ hasText: "0 / 3 · 2 runs gave their attempt back" }));
    await expect
      .poll(() => runs.allTextContents())
      .toEqual([
        expect.stringContaining("suspend: attempt given back"),
        expect.stringContaining("suspend: attempt given back"),
      ]);
    for (const [name, type] of [
      ["create-account", "step"],
      ["cool-off", "sleep"],
      ["approval", "token"],
    ] as const) {
      await see(step(page, name, "done"));
      expect(await step(page, name, "done").locator("td").nth(1).textContent()).toBe(type);
    }
    const names = await page.locator('[data-testid="job-steps"] tbody tr td:first-child').allTextContents();
    expect(names).toEqual(["create-account", "cool-off", "approval"]);
    const tokenId = ((await http.call("GET", `/jobs/${id}`)).body.waiting as { token: string }).token;
    expect(await page.getByTestId("job-waiting").textContent()).toContain(tokenId);

    // Not JSON: said under the form, and nothing is sent.
    await page.getByTestId("token-data").fill("{ approved: yes");
    await page.getByTestId("token-complete").click();
    await see(page.getByTestId("token-error").filter({ hasText: "not JSON" }));
    expect((await http.call("GET", `/tokens/${tokenId}`)).body.status).toBe("pending");

    await page.getByTestId("token-data").fill(JSON.stringify({ approved: true, by: "the console" }));
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes(`/tokens/${tokenId}?`)),
      page.getByTestId("token-complete").click(),
    ]);
    expect(answer.status()).toBe(200);
    await see(detailStatus(page, id, "done"), 20_000);
    await see(step(page, "send-welcome", "done"));
    await see(page.getByTestId("job-attempts").filter({ hasText: "1 / 3 · 2 runs gave their attempt back" }));
    // Polled whole, as the first two. A read after a poll that saw three entries once got the due
    // entry's text third (a loaded run; the timeline re-renders on its own 2 s poll of the steps).
    await expect
      .poll(() => runs.allTextContents())
      .toEqual([
        expect.stringContaining("suspend: attempt given back"),
        expect.stringContaining("suspend: attempt given back"),
        expect.stringContaining("attempt 1: done"),
      ]);
    await see(page.getByTestId("token-message").filter({ hasText: `completed ${tokenId}` }));
    expect(await page.getByTestId("job-waiting").count()).toBe(0);
    expect(await page.getByTestId("token-form").count()).toBe(0);
    expect(JSON.parse((await page.getByTestId("job-result").textContent()) ?? "")).toMatchObject({
      user,
      approval: { approved: true, by: "the console" },
    });
    expect((await http.call("GET", `/tokens/${tokenId}`)).body).toMatchObject({ status: "completed" });
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  describe("through the stage proxy", () => {
    let proxy: ConsoleServer;
    const forwarded: string[] = [];
    beforeAll(async () => {
      proxy = await startConsoleServer({
        transport: recorded(httpTransport({ url: env.stack().url }), forwarded),
      });
    });
    afterAll(async () => {
      await proxy?.close();
    });

    it("the token's url names the stack, but the page completes it through the proxy, with the console's token", async () => {
      const made = await http.call("POST", "/jobs", {
        kind: "onboard",
        payload: { user: `proxy-${randomUUID().slice(0, 8)}`, sleepSeconds: 0 },
      });
      const id = made.body.id as string;
      const { page, problems } = await openConsole(proxy.url);
      // The page took its token from the address and keeps it for the tab; now the job's address.
      await page.goto(`${proxy.origin}/console/#/jobs/${id}`);
      await see(page.getByTestId("token-form"), 20_000);
      await page.getByTestId("token-data").fill('"approved through the proxy"');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && r.url().includes("/tokens/tok_")),
        page.getByTestId("token-complete").click(),
      ]);
      expect(answer.status()).toBe(200);
      expect(new URL(answer.url()).origin).toBe(proxy.origin);
      await see(detailStatus(page, id, "done"), 20_000);
      await see(page.getByTestId("token-message").filter({ hasText: "completed tok_" }));
      expect(forwarded).toEqual(
        expect.arrayContaining([`GET /jobs/${id}/steps`, expect.stringMatching(/^POST \/tokens\/tok_\w+$/)]),
      );
      expect((await http.call("GET", `/jobs/${id}`)).body.result).toMatchObject({
        approval: "approved through the proxy",
      });
      expect(problems).toEqual([]);
      await page.close();
    }, 60_000);
  });
});
