// Runs one bundled function the way Lambda's Node.js runtime does, in plain Node (no TypeScript
// loader: the bundle is all there is). LAMBDA_TASK_ROOT and _HANDLER name the module and its
// export, as Lambda resolves them; the module is imported once (the init phase), then invocations
// run one at a time in the same process (a warm container). Invocations arrive as JSON lines on
// stdin ({ id, event, deadlineMs }); answers leave as JSON lines on fd 3, so stdout and stderr stay
// the function's own log, as in CloudWatch. An answer carries the result as Lambda serializes it
// (JSON.stringify), or the error as Lambda reports it ({ errorType, errorMessage }).
import { randomUUID } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const answers = createWriteStream("", { fd: 3 });
const answer = (message) => answers.write(`${JSON.stringify(message)}\n`);
const errorOf = (err) => ({
  errorType: err instanceof Error ? err.name : typeof err,
  errorMessage: err instanceof Error ? err.message : String(err),
});

const env = process.env;
const taskRoot = env.LAMBDA_TASK_ROOT ?? "";
const handlerName = env._HANDLER ?? "";
const dot = handlerName.lastIndexOf(".");
const modulePath = handlerName.slice(0, dot);
const exportName = handlerName.slice(dot + 1);

async function init() {
  // Lambda looks for <module>.js, then .mjs, then .cjs under the task root.
  const file = [".js", ".mjs", ".cjs"].map((ext) => join(taskRoot, modulePath + ext)).find(existsSync);
  if (!file)
    throw Object.assign(new Error(`Cannot find module '${modulePath}'`), {
      name: "Runtime.ImportModuleError",
    });
  const module = await import(pathToFileURL(file).href);
  const handler = module[exportName];
  if (typeof handler !== "function")
    throw Object.assign(new Error(`${handlerName} is undefined or not exported`), {
      name: "Runtime.HandlerNotFound",
    });
  return handler;
}

function contextFor(requestId, deadlineMs) {
  const name = env.AWS_LAMBDA_FUNCTION_NAME ?? "";
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: name,
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION ?? "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:${env.AWS_REGION}:000000000000:function:${name}`,
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? "128",
    awsRequestId: requestId,
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME ?? "",
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME ?? "",
    getRemainingTimeInMillis: () => Math.max(0, deadlineMs - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

const started = performance.now();
let handler;
try {
  handler = await init();
} catch (err) {
  answer({ type: "init", ok: false, error: errorOf(err) });
  process.exitCode = 1;
  answers.end();
}

if (handler) {
  answer({ type: "init", ok: true, nodeVersion: process.version, initMs: performance.now() - started });
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on("line", (line) => {
    const { id, event, deadlineMs } = JSON.parse(line);
    queue = queue.then(async () => {
      const requestId = randomUUID();
      process.env._X_AMZN_TRACE_ID = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll("-", "").slice(0, 24)};Sampled=0`;
      try {
        const result = await handler(event, contextFor(requestId, deadlineMs));
        answer({ type: "invoke", id, ok: true, payload: JSON.stringify(result) ?? "null" });
      } catch (err) {
        answer({ type: "invoke", id, ok: false, error: errorOf(err) });
      }
    });
  });
  lines.on("close", () => {
    queue.then(() => process.exit(0));
  });
}
