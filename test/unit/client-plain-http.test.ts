import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { networkInterfaces } from "node:os";
import { describe, expect, it } from "vitest";
import { httpTransport } from "../../client/http-transport.ts";
import { invokeTransport } from "../../client/invoke-transport.ts";

/**
 * Plain http to a host that isn't loopback would carry the signed request, its session token and the
 * payloads in the clear past every hop: both transports refuse it when they are made, unless the
 * caller opts in by name (`allowPlainHttp: true`). Loopback (npm start) and https are unaffected.
 */
const session = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "secret",
  sessionToken: "session-token-example",
};

/** This machine's own address on a network interface, when it has one: a host that isn't loopback. */
const ownAddress = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === "IPv4" && !a.internal)?.address;

describe("plain http to a host that isn't loopback", () => {
  it("is refused by both transports when they are made, naming the host and the way out", () => {
    for (const url of ["http://api.example.com", "http://10.0.0.5:3000/", "http://[fd00::2]:3000"]) {
      expect(() => httpTransport({ url, region: "eu-west-1", credentials: session }), url).toThrow(
        /plain http .* https:\/\/, or pass allowPlainHttp: true/,
      );
      expect(() => invokeTransport({ functionName: "api", endpoint: url, region: "eu-west-1" }), url).toThrow(
        /plain http .* https:\/\/, or pass allowPlainHttp: true/,
      );
    }
  });

  it("is allowed for loopback and for https", () => {
    for (const url of [
      "http://127.0.0.1:3000",
      "http://localhost:3000",
      "http://[::1]:3000",
      "https://api.example.com",
    ]) {
      expect(() => httpTransport({ url, region: "eu-west-1", credentials: session }), url).not.toThrow();
      invokeTransport({ functionName: "api", endpoint: url, region: "eu-west-1" }).close();
    }
  });

  it.skipIf(ownAddress === undefined)(
    "is sent, signed, when the caller passes allowPlainHttp: true",
    async () => {
      let headers: IncomingHttpHeaders | undefined;
      const server = createServer((req, res) => {
        headers = req.headers;
        res.writeHead(200, { "content-type": "application/json" }).end('{"items":[]}');
      });
      await new Promise<void>((resolve) => server.listen(0, ownAddress, resolve));
      try {
        const url = `http://${ownAddress}:${(server.address() as AddressInfo).port}`;
        expect(() => httpTransport({ url, region: "eu-west-1", credentials: session })).toThrow(/plain http/);
        const transport = httpTransport({
          url,
          region: "eu-west-1",
          credentials: session,
          allowPlainHttp: true,
        });
        expect(await transport.send({ method: "GET", path: "/queues" })).toMatchObject({ status: 200 });
        expect(headers?.["x-amz-security-token"]).toBe(session.sessionToken);
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  );
});
