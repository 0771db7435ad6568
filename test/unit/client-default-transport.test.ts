import { once } from "node:events";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import type { app } from "../../app/index.ts";
import { createClient } from "../../client/create-client.ts";
import { SkyforgeApiError } from "../../client/errors.ts";

/**
 * `createClient<typeof app>()` with no options (issue 38: the producer in a project's own function):
 * the transport is the HTTP API at SKYFORGE_ENDPOINT, signed as any HTTP transport signs; without
 * it, one error that says what to pass or set.
 */
const saved = process.env.SKYFORGE_ENDPOINT;
afterEach(() => {
  if (saved === undefined) delete process.env.SKYFORGE_ENDPOINT;
  else process.env.SKYFORGE_ENDPOINT = saved;
});

describe("createClient() without a transport", () => {
  it("refuses, naming the option and the variable, when SKYFORGE_ENDPOINT is not set", () => {
    delete process.env.SKYFORGE_ENDPOINT;
    expect(() => createClient<typeof app>()).toThrow(
      /no transport: pass \{ transport \}.*or set SKYFORGE_ENDPOINT/,
    );
  });

  it("sends to SKYFORGE_ENDPOINT, signed", async () => {
    const seen: { url?: string; headers?: IncomingHttpHeaders } = {};
    const server = createServer((req, res) => {
      seen.url = req.url;
      seen.headers = req.headers;
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "not_found", message: "no job j-1" } }));
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    try {
      process.env.SKYFORGE_ENDPOINT = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const jobs = createClient<typeof app>();
      const err = await jobs.get("j-1").catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SkyforgeApiError);
      expect((err as SkyforgeApiError).code).toBe("not_found");
      expect(seen.url).toBe("/jobs/j-1");
      expect(seen.headers?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=/);
    } finally {
      server.close();
    }
  });
});
