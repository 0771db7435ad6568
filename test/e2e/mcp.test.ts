import { randomUUID } from "node:crypto";
import { request } from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateTaskResultSchema,
  GetTaskPayloadResultSchema,
  GetTaskResultSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { docBlocks } from "../support/doc-blocks.ts";
import { call, linePattern, sessionAnswer, taskState } from "../support/mcp-calls.ts";
import { skyforgeBin } from "../support/skyforge-cli.ts";
import { localStackForFile } from "../support/stack-for-file.ts";
import { waitFor } from "../support/wait.ts";

/**
 * The MCP server (docs/guide/mcp.md) driven by the SDK's own client, over stdio (`skyforge mcp`)
 * and over Streamable HTTP (the stack's /mcp), against one stack as `npm start` runs it (local/stack.ts
 * over app/, started in this process). Every wait is for a state, with a bound.
 */
const stack = localStackForFile({ app });

const READING_TOOLS = ["get_job", "job_steps", "list_queues", "search_jobs"];
const GUIDE = "docs/guide/mcp.md";

/** The guide's client configuration: what `npx skyforge` is given (`["mcp"]`), run here through the bin. */
function guideArgs(): string[] {
  const block = docBlocks(GUIDE).find(
    (b) => b.lang === "json" && b.marker?.startsWith("checked by test/e2e/mcp.test.ts"),
  );
  const config = JSON.parse(block?.text ?? "{}") as {
    mcpServers: { skyforge: { command: string; args: string[] } };
  };
  const { command, args } = config.mcpServers.skyforge;
  expect([command, args[0]]).toEqual(["npx", "skyforge"]);
  return args.slice(1);
}

async function connect(
  via: "stdio" | "http",
  args: string[] = [],
): Promise<Client & { transportErrors: Error[] }> {
  const client = new Client({ name: "skyforge-test", version: "1.0.0" }, { capabilities: { tasks: {} } });
  const transport: Transport =
    via === "http"
      ? new StreamableHTTPClientTransport(new URL(`${stack().url}/mcp`))
      : new StdioClientTransport({
          command: process.execPath,
          args: [skyforgeBin, ...guideArgs(), ...args],
          env: { ...(process.env as Record<string, string>), SKYFORGE_ENDPOINT: stack().url },
          stderr: "pipe",
        });
  // What the transport could not read (a line on stdout that isn't a message): none is expected.
  const errors: Error[] = [];
  client.onerror = (err) => errors.push(err);
  await client.connect(transport);
  return Object.assign(client, { transportErrors: errors });
}

describe.each(["stdio", "http"] as const)("the MCP server over %s", { timeout: 60_000 }, (via) => {
  let client: Client;
  beforeAll(async () => {
    client = await connect(via);
  }, 30_000);
  afterAll(async () => {
    await client?.close();
  });

  it("lists one enqueue tool per kind, each input a valid JSON Schema, and the job tools", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    const kinds = [...app.kinds, ...app.poolKinds].map(
      (k) => `enqueue_${k.name.replace(/[^A-Za-z0-9_]/g, "_")}`,
    );
    expect(names.filter((n) => n.startsWith("enqueue_")).sort()).toEqual([...kinds].sort());
    expect(names).toEqual(
      expect.arrayContaining([
        ...READING_TOOLS,
        "cancel_job",
        "replay_jobs",
        "complete_token",
        "send_event",
        "pause_queue",
        "resume_queue",
      ]),
    );
    const ajv = new AjvJsonSchemaValidator();
    for (const tool of tools) {
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(() => ajv.getValidator(tool.inputSchema), tool.name).not.toThrow();
      expect(tool.description, tool.name).toBeTruthy();
    }
    const onboard = tools.find((t) => t.name === "enqueue_onboard");
    expect(onboard?.description).toContain("approval");
    expect(onboard?.execution?.taskSupport).toBe("optional");
    // The payload's schema is the kind's own, as zod writes it.
    expect(onboard?.inputSchema.properties?.payload).toMatchObject({ type: "object", required: ["user"] });
  });

  it("enqueues echo and reads it back, done with its payload as result", async () => {
    const payload = { hello: "mcp", via };
    const tag = `mcp-${randomUUID().slice(0, 8)}`;
    const enqueued = await call(client, "enqueue_echo", { payload, tags: [tag] });
    expect(enqueued.isError, enqueued.summary).toBe(false);
    expect(enqueued.value.tags).toEqual([tag]);
    expect(enqueued.summary).toMatch(/^enqueued echo job \w+: queued$/);
    const id = enqueued.value.id as string;
    const done = await waitFor(
      async () => {
        const job = await call(client, "get_job", { id });
        return job.value.status === "done" && job;
      },
      `echo job ${id} done`,
      20_000,
      200,
    );
    expect(done.summary).toBe(`echo job ${id}: done`);
    expect(done.value.result).toEqual(payload);
    const page = await call(client, "search_jobs", { status: "done", limit: 100 });
    expect(page.isError, page.summary).toBe(false);
    expect(Array.isArray(page.value.items)).toBe(true);
  });

  it("search_jobs finds jobs by tag, newest first, and passes a refused filter on as a tool error", async () => {
    // Tagged over the API (enqueue tools take no tags): two jobs of one fresh tag, one of another.
    const tag = `mcp-${via}-${randomUUID().slice(0, 8)}`;
    const enqueue = async (tags: string[]) => {
      const res = await fetch(`${stack().url}/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "echo", payload: { tags }, tags }),
      });
      expect(res.status).toBe(201);
      return ((await res.json()) as { id: string }).id;
    };
    const older = await enqueue([tag]);
    await enqueue([`${tag}-other`]);
    const newer = await enqueue([tag, "second"]);
    const page = await call(client, "search_jobs", { tag, limit: 10 });
    expect(page.isError, page.summary).toBe(false);
    expect(page.summary).toBe("2 jobs");
    expect(page.value.items.map((j: { id: string }) => j.id)).toEqual([newer, older]);
    const window = await call(client, "search_jobs", {
      tag,
      createdAfter: "2030-01-02T00:00:00Z",
      createdBefore: "2030-01-01T00:00:00Z",
    });
    expect(window.isError).toBe(true);
    // The API's 400 names the field; the tool error carries its code and issues.
    expect(JSON.stringify(window)).toContain("createdAfter");
  });

  it("runs onboard as a task to input_required, completes it with tasks/update, and sees it completed", async () => {
    const user = `mcp-${randomUUID().slice(0, 8)}`;
    const created = await client.request(
      {
        method: "tools/call",
        params: {
          name: "enqueue_onboard",
          arguments: { payload: { user, sleepSeconds: 0 } },
          task: { ttl: 60_000 },
        },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    expect(created.task.status).toBe("working");
    const asking = await waitFor(
      async () => {
        const task = await taskState(client, taskId);
        return task.status === "input_required" && task;
      },
      `onboard ${taskId} input_required`,
      30_000,
      250,
    );
    // What is asked: the token's name, and the data onboard declares for it, as JSON Schema.
    expect(asking._meta?.["skyforge/input"]).toMatchObject({
      token: "approval",
      schema: { type: "object", properties: { approved: { type: "boolean" } }, required: ["approved"] },
    });
    expect(asking.statusMessage).toContain("approval");

    // Data the declaration refuses: the call's error names the field, and the job still waits.
    await expect(
      client.request(
        { method: "tasks/update", params: { taskId, data: { approved: "yes" } } },
        GetTaskResultSchema,
      ),
    ).rejects.toThrow(/validation_error: .*nothing was completed \(data\.approved: /);
    expect((await taskState(client, taskId)).status).toBe("input_required");

    const updated = await client.request(
      { method: "tasks/update", params: { taskId, data: { approved: true, by: "an agent" } } },
      GetTaskResultSchema,
    );
    expect(updated.status).not.toBe("input_required");
    await waitFor(
      async () => (await taskState(client, taskId)).status === "completed",
      `onboard ${taskId} completed`,
      30_000,
      250,
    );
    const result = await client.request(
      { method: "tasks/result", params: { taskId } },
      GetTaskPayloadResultSchema,
    );
    const job = JSON.parse((result.content as { text: string }[])[1]?.text ?? "null");
    expect(job).toMatchObject({
      id: taskId,
      status: "done",
      result: { user, approval: { approved: true, by: "an agent" } },
    });
  });

  it("cancels a job through tasks/cancel; a tool that enqueues nothing doesn't run as a task", async () => {
    const created = await client.request(
      {
        method: "tools/call",
        params: {
          name: "enqueue_onboard",
          arguments: { payload: { user: `mcp-${randomUUID().slice(0, 8)}`, sleepSeconds: 3600 } },
          task: { ttl: 60_000 },
        },
      },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const cancelled = await client.request(
      { method: "tasks/cancel", params: { taskId } },
      GetTaskResultSchema,
    );
    expect(cancelled).toMatchObject({ taskId, status: "cancelled" });
    expect((await call(client, "get_job", { id: taskId })).value.status).toBe("cancelled");
    await expect(
      client.request(
        {
          method: "tools/call",
          params: { name: "get_job", arguments: { id: taskId }, task: { ttl: 60_000 } },
        },
        CreateTaskResultSchema,
      ),
    ).rejects.toThrow(/get_job doesn't run as a task/);
  });

  it("refuses arguments the kind's schema refuses: a tool error naming the field, nothing enqueued", async () => {
    const uniqueKey = `bad-${randomUUID()}`;
    const bad = await call(client, "enqueue_onboard", { payload: { user: "" }, uniqueKey });
    expect(bad.isError).toBe(true);
    // Refused by the kind's own schema on the server, before any request to the API.
    expect(bad.summary).toMatch(
      /^validation_error: the arguments don't fit enqueue_onboard's input: nothing was enqueued \(payload\.user: /,
    );
    expect(bad.value.error.issues[0].path).toBe("payload.user");
    // Nothing was enqueued: the same uniqueKey now makes a new job, no duplicate of another.
    const good = await call(client, "enqueue_echo", { payload: 1, uniqueKey });
    expect(good.value.duplicate).toBe(false);
    const missing = await call(client, "get_job", { id: "no-such-job" });
    expect(missing).toMatchObject({ isError: true, value: { error: { code: "not_found" } } });
  });
});

describe("skyforge mcp --read-only", { timeout: 60_000 }, () => {
  it("lists and serves the reading tools only", async () => {
    // An app module that prints on stdout as it loads: the protocol's stream stays clean all the same.
    const client = await connect("stdio", ["--read-only", "--app", "test/fixtures/mcp-noisy-app.ts"]);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(READING_TOOLS);
      expect(tools.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
      expect(client.transportErrors).toEqual([]);
      await expect(client.callTool({ name: "enqueue_echo", arguments: { payload: 1 } })).rejects.toThrow(
        /no tool/,
      );
    } finally {
      await client.close();
    }
  });
});

describe("/mcp refuses what the API refuses", () => {
  const initialize = {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "page", version: "1" } },
  };
  /** node:http, not fetch: fetch sends the URL's Host whatever it is given. */
  const post = (headers: Record<string, string>) =>
    new Promise<{ status: number; session: string | undefined; body: string }>((resolve, reject) => {
      const body = JSON.stringify(initialize);
      const req = request(
        `${stack().url}/mcp`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...headers,
          },
        },
        (res) => {
          let text = "";
          res.on("data", (d) => {
            text += d;
          });
          // The SSE answer of an accepted initialize stays open: its first event is enough.
          const done = () =>
            resolve({
              status: res.statusCode ?? 0,
              session: res.headers["mcp-session-id"] as string | undefined,
              body: text,
            });
          res.on("end", done);
          if (res.statusCode === 200)
            res.once("data", () => {
              done();
              res.destroy();
            });
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  it("a cross-site page's request (another Origin) and DNS rebinding (another Host): 403, no session", async () => {
    const foreign: Record<string, string>[] = [{ origin: "https://evil.example" }, { host: "evil.example" }];
    for (const headers of foreign) {
      const res = await post(headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.session).toBeUndefined();
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: "forbidden" } });
    }
    const own = await post({});
    expect(own.status).toBe(200);
    expect(own.session).toBeTruthy();
  });
});

describe(`${GUIDE}'s session`, { timeout: 60_000 }, () => {
  it("answers as the guide shows, call by call, over stdio", async () => {
    const block = docBlocks(GUIDE).find((b) =>
      b.marker?.startsWith("checked by test/e2e/mcp.test.ts: the session"),
    );
    const lines = (block?.text ?? "").trimEnd().split("\n");
    expect(lines.length).toBeGreaterThan(5);
    const client = await connect("stdio");
    const ids = new Map<string, string>();
    try {
      for (let i = 0; i < lines.length; i++) {
        const line = (lines[i] as string).slice(2);
        const next = lines[i + 1];
        const expected = next !== undefined && !next.startsWith("> ") ? next : undefined;
        if (expected !== undefined) i++;
        const reads = /^(get_job|tasks\/get) /.test(line);
        const check = async () => {
          const answer = await sessionAnswer(client, line, ids);
          if (expected === undefined) return true;
          const match = linePattern(expected, ids).exec(answer ?? "");
          if (!match && !reads) expect(answer, line).toBe(expected);
          for (const [name, id] of Object.entries(match?.groups ?? {})) ids.set(name, id);
          return match !== null;
        };
        // A read is asked again until the job has got where the line says (a job's state, awaited with a bound).
        if (reads) await waitFor(check, `"${line}" to answer "${expected}"`, 30_000, 250);
        else await check();
      }
    } finally {
      await client.close();
    }
    expect([...ids.keys()].sort()).toEqual(["echo", "onboard"]);
  });
});
