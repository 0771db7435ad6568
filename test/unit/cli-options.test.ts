import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CommanderError, InvalidArgumentError } from "commander";
import { describe, expect, it, onTestFinished } from "vitest";
import { queuePatch } from "../../cli/commands/queues.ts";
import { errorReport, exitCodeFor, UsageError } from "../../cli/exit-codes.ts";
import { endpointUrl, integer, isoTime, jsonValue, positiveNumber, priority } from "../../cli/options.ts";
import { keyValues, table } from "../../cli/output.ts";
import { buildProgram } from "../../cli/program.ts";
import { resolveTarget } from "../../cli/target.ts";
import { SkyforgeApiError, SkyforgeTransportError } from "../../client/errors.ts";

describe("option values", () => {
  it("integer: whole numbers in range, else commander's InvalidArgumentError", () => {
    const limit = integer(1, 100);
    expect(limit("25")).toBe(25);
    expect(limit(" 7 ")).toBe(7);
    for (const bad of ["0", "101", "1.5", "1e2", "", "ten", "0x10", "9".repeat(20)]) {
      expect(() => limit(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  it("priority: 1..5 as a number, or the names normal and critical", () => {
    expect(["1", "5", " 3 "].map(priority)).toEqual([1, 5, 3]);
    expect(priority("normal")).toBe("normal");
    expect(priority("critical")).toBe("critical");
    for (const bad of ["0", "6", "2.5", "", "high", "Critical", "05"])
      expect(() => priority(bad), bad).toThrow(InvalidArgumentError);
  });

  it("positiveNumber: seconds such as 0.2", () => {
    expect(positiveNumber("0.2")).toBe(0.2);
    for (const bad of ["0", "-1", "", "x", "Infinity"])
      expect(() => positiveNumber(bad), bad).toThrow(InvalidArgumentError);
  });

  it("jsonValue: any JSON, or a hint to quote it", () => {
    expect(jsonValue('{"a":[1,"x"]}')).toEqual({ a: [1, "x"] });
    expect(jsonValue("42")).toBe(42);
    expect(jsonValue('"text"')).toBe("text");
    expect(() => jsonValue("{a:1}")).toThrow(/not JSON .*Quote it/);
  });

  it("isoTime: with its offset, as the API's runAt", () => {
    expect(isoTime("2030-01-01T09:00:00Z")).toBe("2030-01-01T09:00:00Z");
    expect(isoTime("2030-01-01T09:00:00.5+02:00")).toBe("2030-01-01T09:00:00.5+02:00");
    for (const bad of ["2030-01-01", "2030-01-01T09:00:00", "tomorrow", "2030-13-01T09:00:00Z"]) {
      expect(() => isoTime(bad), bad).toThrow(InvalidArgumentError);
    }
  });

  it("endpointUrl", () => {
    expect(endpointUrl("http://127.0.0.1:3000/")).toBe("http://127.0.0.1:3000");
    expect(() => endpointUrl("127.0.0.1:3000")).toThrow(InvalidArgumentError);
    expect(() => endpointUrl("ftp://host")).toThrow(/http:\/\/ or https:\/\//);
  });
});

describe("queues set: the PATCH body from the options given", () => {
  it("nests backoff and retention, and sends only what was given", () => {
    expect(queuePatch({ maxConcurrency: 20, backoffMax: 60, retentionDead: 14 })).toEqual({
      maxConcurrency: 20,
      backoff: { maxSeconds: 60 },
      retentionDays: { dead: 14 },
    });
    expect(queuePatch({ backoffBase: 1, backoffMax: 2, retentionDone: 0 })).toEqual({
      backoff: { baseSeconds: 1, maxSeconds: 2 },
      retentionDays: { done: 0 },
    });
    expect(queuePatch({})).toBeUndefined();
  });
});

describe("the command line", () => {
  const parse = async (...args: string[]) => {
    const program = buildProgram();
    const configure = (c: typeof program) => {
      c.exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
      for (const sub of c.commands) configure(sub);
    };
    configure(program);
    return program.parseAsync(args, { from: "user" });
  };

  it("refuses bad values, unknown options and missing arguments before sending anything", async () => {
    for (const args of [
      ["jobs", "ls", "--limit", "0"],
      ["jobs", "ls", "--status", "finished"],
      ["jobs", "get"],
      ["jobs", "ls", "--bogus"],
      ["enqueue", "echo", "--payload", "{nope"],
      ["enqueue", "echo", "--delay", "-1"],
      ["schedules", "put", "x", "--kind", "echo"],
      ["schedules", "put", "x", "--cron", "* * * * *", "--kind", "echo", "--misfire", "later"],
      ["--transport", "smoke", "queues", "ls"],
      ["--endpoint", "localhost", "queues", "ls"],
      ["tail", "--interval", "0"],
    ]) {
      const err = await parse(...args).catch((e: unknown) => e);
      expect(err, args.join(" ")).toBeInstanceOf(CommanderError);
      expect(exitCodeFor(err), args.join(" ")).toBe(2);
    }
  });
});

describe("targets", () => {
  it("an endpoint from --endpoint, SKYFORGE_ENDPOINT, or npm start's address", async () => {
    expect((await resolveTarget({ endpoint: "http://127.0.0.1:4000" }, {})).description).toBe(
      "http://127.0.0.1:4000",
    );
    expect((await resolveTarget({}, { SKYFORGE_ENDPOINT: "http://127.0.0.1:5000" })).description).toBe(
      "http://127.0.0.1:5000",
    );
    expect((await resolveTarget({}, {})).description).toBe("http://127.0.0.1:3000");
  });

  it("npm start's PORT when it was given, below SKYFORGE_ENDPOINT and --endpoint; a PORT that isn't one is refused", async () => {
    expect((await resolveTarget({}, { PORT: "4100" })).description).toBe("http://127.0.0.1:4100");
    expect((await resolveTarget({}, { PORT: "" })).description).toBe("http://127.0.0.1:3000");
    expect(
      (await resolveTarget({}, { PORT: "4100", SKYFORGE_ENDPOINT: "http://127.0.0.1:5000" })).description,
    ).toBe("http://127.0.0.1:5000");
    expect((await resolveTarget({ endpoint: "http://127.0.0.1:4000" }, { PORT: "4100" })).description).toBe(
      "http://127.0.0.1:4000",
    );
    // PORT=0 is "any free port" to npm start: nothing the CLI could find.
    for (const port of ["0", "70000", "abc", "80 "]) {
      await expect(resolveTarget({}, { PORT: port })).rejects.toThrow(
        expect.objectContaining({
          name: "UsageError",
          message: expect.stringMatching(/^PORT=.*--endpoint or SKYFORGE_ENDPOINT/),
        }),
      );
    }
  });

  it("plain http to a host that isn't loopback only with --allow-plain-http: it would carry the signature and session token in the clear", async () => {
    for (const transport of ["http", "invoke"] as const) {
      await expect(
        resolveTarget({ endpoint: "http://10.0.0.5:3000", region: "eu-west-1", transport }, {}),
      ).rejects.toThrow(
        expect.objectContaining({
          name: "UsageError",
          message: expect.stringMatching(/plain http to 10\.0\.0\.5:3000 .*--allow-plain-http/),
        }),
      );
      const allowed = await resolveTarget(
        { endpoint: "http://10.0.0.5:3000", region: "eu-west-1", transport, allowPlainHttp: true },
        {},
      );
      expect(allowed.description).toMatch(/^http:\/\/10\.0\.0\.5:3000/);
      allowed.close();
    }
    await expect(
      resolveTarget({}, { SKYFORGE_ENDPOINT: "http://api.example.com", AWS_REGION: "eu-west-1" }),
    ).rejects.toThrow(/--allow-plain-http/);
  });

  it("a stage from its outputs file; a missing or foreign one is a usage error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "skyforge-cli-"));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "outputs.prod.json");
    writeFileSync(
      file,
      JSON.stringify({
        stage: "prod",
        api: "https://abc123.execute-api.eu-west-1.amazonaws.com",
        apiFunction: "skyforge-prod-api",
        enqueueFunction: "skyforge-prod-enqueue",
      }),
    );
    const target = await resolveTarget({ stage: "prod", outputs: file }, {});
    expect(target.description).toBe("stage prod (https://abc123.execute-api.eu-west-1.amazonaws.com)");
    const invoke = await resolveTarget({ stage: "prod", outputs: file, transport: "invoke" }, {});
    expect(invoke.description).toBe("stage prod (Lambda Invoke of skyforge-prod-api)");
    invoke.close();
    // The region the outputs name is the stage's; signing for another could only be refused.
    expect((await resolveTarget({ stage: "prod", outputs: file, region: "eu-west-1" }, {})).description).toBe(
      "stage prod (https://abc123.execute-api.eu-west-1.amazonaws.com)",
    );
    await expect(resolveTarget({ stage: "prod", outputs: file, region: "us-east-1" }, {})).rejects.toThrow(
      /stage prod is in eu-west-1, not us-east-1/,
    );
    await expect(resolveTarget({ stage: "dev", outputs: file }, {})).rejects.toThrow(UsageError);
    await expect(resolveTarget({ stage: "dev", outputs: join(dir, "none.json") }, {})).rejects.toThrow(
      UsageError,
    );
    await expect(resolveTarget({ stage: "prod", endpoint: "http://127.0.0.1:1" }, {})).rejects.toThrow(
      /--endpoint or --stage, not both/,
    );
    await expect(resolveTarget({ outputs: file }, {})).rejects.toThrow(/--outputs goes with --stage/);
  });
});

describe("exit codes and error reports", () => {
  it("maps each kind of failure to its code, naming the API's code", () => {
    const notFound = new SkyforgeApiError(404, "not_found", "job X not found");
    expect(exitCodeFor(notFound)).toBe(3);
    expect(errorReport(notFound)).toEqual({ code: "not_found", message: "job X not found", status: 404 });
    expect(exitCodeFor(new SkyforgeApiError(500, "internal", "internal error"))).toBe(4);
    const refused = new SkyforgeTransportError("no answer", undefined, {
      cause: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }),
    });
    expect(exitCodeFor(refused)).toBe(4);
    expect(errorReport(refused)).toEqual({ code: "unreachable", message: "no answer (ECONNREFUSED)" });
    const forbidden = new SkyforgeTransportError("not the API", {
      status: 403,
      body: { message: "Forbidden" },
    });
    expect(errorReport(forbidden)).toMatchObject({ code: "unexpected_answer", status: 403 });
    expect(exitCodeFor(new TypeError("x is not a function"))).toBe(70);
    expect(errorReport(new TypeError("x is not a function"))).toMatchObject({
      code: "cli_error",
      message: expect.stringMatching(/^TypeError: x is not a function \(at /),
    });
    expect(exitCodeFor(new UsageError("x"))).toBe(2);
    expect(errorReport(new UsageError("x"))).toEqual({ code: "usage", message: "x" });
  });
});

describe("tables", () => {
  it("aligns columns without borders, a dash for nothing", () => {
    expect(
      table(
        ["ID", "STATUS"],
        [
          ["a", "done"],
          ["bbbb", undefined],
        ],
      ).split("\n"),
    ).toEqual(["ID    STATUS", "a     done", "bbbb  -"]);
    expect(
      keyValues([
        ["id", "a"],
        ["last error", null],
      ]).split("\n"),
    ).toEqual(["id          a", "last error  -"]);
  });
});
