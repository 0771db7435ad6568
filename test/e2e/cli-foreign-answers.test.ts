import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skyforgeCli } from "../support/skyforge-cli.ts";

/**
 * The CLI against something that is not the API (a captive portal, a proxy's page, another service
 * on the port): whatever comes back, it exits 4 with one line naming what came back (cli/README.md,
 * "Exit codes": something else answered), never a crash with a source location (70) and never a
 * table of `undefined`s with exit 0.
 */

/** What the stand-in answers, chosen by the first path segment of the endpoint's base path. */
const answers: Record<string, { status: number; type: string; body: string }> = {
  html: {
    status: 200,
    type: "text/html",
    body: "<!doctype html><html><body>Sign in to the Wi-Fi</body></html>",
  },
  "html-502": { status: 502, type: "text/html", body: "<html>\n<h1>Bad Gateway</h1>\n</html>" },
  text: { status: 200, type: "text/plain", body: "OK" },
  object: { status: 200, type: "application/json", body: '{"hello":"world"}' },
  "null-items": { status: 200, type: "application/json", body: '{"items":[null,5],"id":1}' },
  "string-items": { status: 200, type: "application/json", body: '{"items":"x","name":3}' },
};

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const answer = answers[(req.url ?? "").split("/")[1] ?? ""] ?? {
      status: 404,
      type: "text/plain",
      body: "",
    };
    res.writeHead(answer.status, { "content-type": answer.type }).end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const commands = [
  ["jobs", "get", "01ARZ3NDEKTSV4RRFFQ69G5FAV"],
  ["jobs", "ls"],
  ["enqueue", "echo"],
  ["queues", "ls"],
  ["queues", "pause", "default"],
  ["schedules", "ls"],
  ["groups", "get", "g1"],
  ["groups", "children", "g1"],
];

describe("an answer that is not the API's", () => {
  for (const answer of Object.keys(answers)) {
    it(`${answer}: every command exits 4 with one line, no stack and nothing on stdout`, async () => {
      const cli = skyforgeCli(() => `${base}/${answer}`, process.cwd());
      const runs = await Promise.all(commands.map((args) => cli.run(args)));
      runs.forEach((r, i) => {
        const what = `skyforge ${commands[i]?.join(" ")} against ${answer}:\n${r.stderr}`;
        expect(r.code, what).toBe(4);
        expect(r.stdout, what).toBe("");
        expect(r.stderr, what).toMatch(/^error: unexpected_answer \(HTTP \d+\): [^\n]+\n$/);
        expect(r.stderr, what).not.toMatch(/\.ts:\d+|cli_error|TypeError/);
      });
    });
  }

  it("--json: the error as one JSON document on stderr", async () => {
    const cli = skyforgeCli(() => `${base}/null-items`, process.cwd());
    const error = await cli.json(["jobs", "ls"], 4);
    expect(error).toMatchObject({ error: { code: "unexpected_answer", status: 200 } });
    expect((error as { error: { message: string } }).error.message).toMatch(
      /^GET \/jobs answered something that is not the skyforge API's answer \(items\.0: /,
    );
  });
});
