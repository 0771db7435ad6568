import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  RELATED_TASK_META_KEY,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import * as z from "zod";
import pkg from "../package.json" with { type: "json" };
import { issuesOf } from "../lib/errors.ts";
import { readTask, taskOf, taskResult } from "./job-tasks.ts";
import { jobTools } from "./job-tools.ts";
import { enqueueTool, type McpKind } from "./kind-tools.ts";
import { completeWaitingToken, RpcError, TasksUpdateRequest, taskCallError, untilEnded } from "./task-calls.ts";
import type { McpClient, McpTool } from "./tool.ts";
import { errorAnswer, refusalOf, toolAnswer, toolError } from "./tool-result.ts";

export interface McpServerOptions {
  client: McpClient;
  /** The app's kinds: one `enqueue_<kind>` tool each. */
  kinds: readonly McpKind[];
  /** Serves the reading tools only (get_job, search_jobs, job_steps, list_queues), and no tasks. */
  readOnly?: boolean;
}

/** The tools a server serves: one enqueue per kind, then the job tools; the reading ones alone when read-only. */
export function mcpTools(options: McpServerOptions): McpTool[] {
  const all = [...options.kinds.map((k) => enqueueTool(k, options.client)), ...jobTools(options.client)];
  return options.readOnly ? all.filter((t) => !t.writes) : all;
}

/** A tool's listing: its input's JSON Schema as zod writes it (draft 2020-12, as MCP's 2025-11-25 says). */
function listing(tool: McpTool, tasks: boolean): Tool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input, { io: "input", unrepresentable: "any" }) as Tool["inputSchema"],
    annotations: { readOnlyHint: !tool.writes, openWorldHint: false },
    ...(tasks && tool.enqueues !== undefined ? { execution: { taskSupport: "optional" as const } } : {}),
  };
}

/**
 * skyforge as an MCP server (docs/guide/mcp.md), over any transport: stdio (`skyforge mcp`) or
 * Streamable HTTP (the local stack's /mcp). Every call is one or two calls of the typed client, so
 * the same server drives the local stack and a deployed stage. A job is a task: the 2025-11-25
 * spec's experimental tasks as this SDK carries them (tasks/get, tasks/result, tasks/list,
 * tasks/cancel), and `tasks/update`, the Tasks extension's call this SDK lacks (mcp/task-calls.ts).
 */
export function createMcpServer(options: McpServerOptions): Server {
  const { client } = options;
  const tasks = !options.readOnly;
  const tools = mcpTools(options);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const kinds = new Map(options.kinds.map((k) => [k.name, k]));
  const server = new Server(
    { name: "skyforge", version: pkg.version },
    {
      capabilities: {
        tools: {},
        ...(tasks ? { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } : {}),
      },
      instructions:
        "skyforge runs background jobs. enqueue_<kind> starts one (as a task when you ask for one); get_job, search_jobs and job_steps read them.",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map((t) => listing(t, tasks)) }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name, arguments: given, task } = request.params;
    const tool = byName.get(name);
    if (!tool) throw new RpcError(ErrorCode.InvalidParams, `no tool ${JSON.stringify(name)} on this server`);
    const args = { ...tool.defaults, ...given };
    const parsed = tool.input.safeParse(args);
    // As a task, the job is the answer: a refused call has none, so it is the request's error.
    const asTask = task !== undefined;
    if (asTask && !(tasks && tool.enqueues !== undefined && clientTakesTasks(server))) {
      // The SDK would refuse a plain answer to a task call anyway; say why instead.
      throw new RpcError(
        ErrorCode.InvalidParams,
        tool.enqueues === undefined || !tasks
          ? `${tool.name} doesn't run as a task: call it without "task"`
          : `a task needs the tasks capability, declared at initialize`,
      );
    }
    if (!parsed.success) {
      const issues = issuesOf(parsed.error);
      const message = `the arguments don't fit ${tool.name}'s input${tool.enqueues ? ": nothing was enqueued" : ""}`;
      if (asTask) throw taskCallError({ code: "validation_error", message, issues });
      return toolError("validation_error", message, issues);
    }
    try {
      const outcome = await tool.run(args);
      if (asTask && outcome.job) return { task: taskOf(outcome.job) };
      return toolAnswer(outcome.summary, outcome.value);
    } catch (err) {
      if (asTask) throw taskCallError(refusalOf(err));
      return errorAnswer(err);
    }
  });

  if (!tasks) return server;

  server.setRequestHandler(GetTaskRequestSchema, async (request) =>
    guarded(() => readTask(client, kinds, request.params.taskId)),
  );
  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const job = await guarded(() => untilEnded(client, request.params.taskId, extra.signal));
    const result = taskResult(job);
    return { ...result, _meta: { [RELATED_TASK_META_KEY]: { taskId: job.id } } };
  });
  server.setRequestHandler(ListTasksRequestSchema, async (request) =>
    guarded(async () => {
      const page = await client.list({ limit: 25, ...(request.params?.cursor ? { cursor: request.params.cursor } : {}) });
      return { tasks: page.items.map((job) => taskOf(job)), ...(page.cursor ? { nextCursor: page.cursor } : {}) };
    }),
  );
  server.setRequestHandler(CancelTaskRequestSchema, async (request, extra) =>
    guarded(async () => {
      const { taskId } = request.params;
      const { cancel } = await client.cancel(taskId);
      // A running job's cancel is asked of its run, which stops within moments: answer once it has
      // (or, past CANCEL_LANDS_MS, with the task still working and its cancel on its way).
      if (cancel === "requested")
        await untilEnded(client, taskId, AbortSignal.any([extra.signal, AbortSignal.timeout(CANCEL_LANDS_MS)])).catch(
          () => undefined,
        );
      return readTask(client, kinds, taskId);
    }),
  );
  server.setRequestHandler(TasksUpdateRequest, async (request) =>
    guarded(async () => {
      await completeWaitingToken(client, kinds, request.params.taskId, request.params.data);
      return readTask(client, kinds, request.params.taskId);
    }),
  );
  return server;
}

/** How long tasks/cancel waits for a running job's run to stop before it answers. */
const CANCEL_LANDS_MS = 5_000;

/** The client said, at initialize, that it takes tasks. */
function clientTakesTasks(server: Server): boolean {
  return server.getClientCapabilities()?.tasks !== undefined;
}

/** A task call's API error as the request's JSON-RPC error, carrying the API's code. */
async function guarded<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof RpcError) throw err;
    throw taskCallError(refusalOf(err));
  }
}
