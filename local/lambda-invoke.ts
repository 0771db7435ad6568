import { isUtf8 } from "node:buffer";
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { readBody } from "../http/request-body.ts";
import { ClientError } from "../lib/errors.ts";
import { errorFields, type Log } from "../lib/observability/log.ts";

/**
 * Lambda's Invoke API (`POST /2015-03-31/functions/{FunctionName}/invocations`) as AWS answers it,
 * for the local functions, so `@aws-sdk/client-lambda` sees the same statuses, headers and error
 * types locally as on AWS. The local functions have one version, `$LATEST`, and no aliases.
 */
export const INVOKE_PATH = /^\/2015-03-31\/functions\/([^/]+)\/invocations\/?$/;

/** Lambda's invoke payload quotas: 6 MB synchronous, 1 MB asynchronous (Event). */
export const MAX_SYNC_PAYLOAD_BYTES = 6 * 1024 * 1024;
export const MAX_EVENT_PAYLOAD_BYTES = 1024 * 1024;
const LOG_TAIL_BYTES = 4096;
/** The local stack has no account; like other AWS emulators it names 000000000000 in ARNs. */
const LOCAL_ACCOUNT = "000000000000";

const INVOCATION_TYPES = ["Event", "RequestResponse", "DryRun"];
const LOG_TYPES = ["Tail", "None"];
const NAME_PATTERN = String.raw`(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_\.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?`;
/** The same pattern, with the parts this emulation reads captured by name. */
const FUNCTION_NAME =
  /^(?:arn:aws[a-zA-Z-]*:lambda:)?(?:(?<region>[a-z]{2}(?:-gov)?-[a-z]+-\d):)?(?:(?<account>\d{12}):)?(?:function:)?(?<name>[a-zA-Z0-9_.-]+)(?::(?<qualifier>\$LATEST|[a-zA-Z0-9_-]+))?$/;
const QUALIFIER = /^[a-zA-Z0-9$_-]{1,128}$/;

export type LocalFunctions = Record<string, (event: unknown) => Promise<unknown>>;

interface Reply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

const awsError = (status: number, type: string, body: Record<string, string>): Reply => ({
  status,
  headers: { "x-amzn-ErrorType": type, "content-type": "application/json" },
  body: JSON.stringify(body),
});

/** Answers one Invoke request; every answer carries `x-amzn-RequestId`, like AWS's. */
export async function serveInvoke(
  req: IncomingMessage,
  res: ServerResponse,
  rawName: string,
  query: string,
  functions: LocalFunctions,
  log: Log,
): Promise<void> {
  const requestId = randomUUID();
  const reply = await invoke(req, rawName, query, functions, log, requestId);
  if (!reply || res.destroyed) return;
  res.writeHead(reply.status, { ...reply.headers, "x-amzn-RequestId": requestId });
  res.end(reply.body ?? "");
}

async function invoke(
  req: IncomingMessage,
  rawName: string,
  query: string,
  functions: LocalFunctions,
  log: Log,
  requestId: string,
): Promise<Reply | undefined> {
  if (req.method !== "POST") {
    const body = new ClientError(
      "method_not_allowed",
      `${req.method} is not allowed on Invoke; use POST`,
    ).toBody();
    return {
      status: 405,
      headers: { "content-type": "application/json", allow: "POST" },
      body: JSON.stringify(body),
    };
  }
  const read = await readBody(req, MAX_SYNC_PAYLOAD_BYTES);
  if (read.kind === "aborted") return undefined;
  if (read.kind === "too_large") {
    return awsError(413, "RequestEntityTooLargeException", {
      Type: "User",
      message: `Request must be smaller than ${MAX_SYNC_PAYLOAD_BYTES} bytes for the InvokeFunction operation`,
    });
  }
  const payload = read.body;

  const { problems, parsed, invocationType, logType, qualifierParam } = validate(req, rawName, query);
  if (problems.length > 0 || !parsed) {
    const n = problems.length;
    return awsError(400, "ValidationException", {
      message: `${n} validation error${n === 1 ? "" : "s"} detected: ${problems.join("; ")}`,
    });
  }
  if (parsed.qualifier && qualifierParam && parsed.qualifier !== qualifierParam) {
    return awsError(400, "InvalidParameterValueException", {
      Type: "User",
      message: "The derived qualifier from the function name does not match the specified qualifier.",
    });
  }
  if (invocationType === "Event" && payload.length > MAX_EVENT_PAYLOAD_BYTES) {
    return awsError(413, "RequestEntityTooLargeException", {
      Type: "User",
      message: `${payload.length} byte payload is too large for the Event invocation type (limit ${MAX_EVENT_PAYLOAD_BYTES} bytes)`,
    });
  }

  const name = parsed.name as string;
  const qualifier = parsed.qualifier ?? qualifierParam;
  const fn = Object.hasOwn(functions, name) ? functions[name] : undefined;
  if (!fn || (qualifier !== undefined && qualifier !== "$LATEST")) {
    const region = parsed.region ?? signedRegion(req) ?? "us-east-1";
    const arn = `arn:aws:lambda:${region}:${parsed.account ?? LOCAL_ACCOUNT}:function:${name}`;
    return awsError(404, "ResourceNotFoundException", {
      Type: "User",
      Message: `Function not found: ${qualifier === undefined ? arn : `${arn}:${qualifier}`}`,
    });
  }

  let event: unknown = {};
  if (payload.length > 0) {
    try {
      if (!isUtf8(payload)) throw new Error("the payload is not UTF-8");
      event = JSON.parse(payload.toString("utf8"));
    } catch (err) {
      return awsError(400, "InvalidRequestContentException", {
        Type: "User",
        message: `Could not parse request body into json: ${(err as Error).message}`,
      });
    }
  }
  if (invocationType === "DryRun") return { status: 204 };

  // Event: AWS queues the event and answers 202; locally the function runs before the 202, so the
  // job is enqueued by the time the caller hears back. A failure is logged (AWS would retry it twice).
  const started = performance.now();
  let result: unknown;
  let failed = false;
  try {
    result = await fn(event);
  } catch (err) {
    failed = true;
    log.error("local function failed", { function: name, invocationType, ...errorFields(err) });
  }
  if (invocationType === "Event") return { status: 202 };

  // A function error is a 200 with this header; the body names the error, not internals.
  const errorBody = { errorType: "Error", errorMessage: "function failed" };
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "X-Amz-Executed-Version": "$LATEST",
    ...(failed ? { "X-Amz-Function-Error": "Unhandled" } : {}),
  };
  if (logType === "Tail") {
    headers["X-Amz-Log-Result"] = logTail(
      requestId,
      performance.now() - started,
      failed ? errorBody : undefined,
    );
  }
  const body = failed ? JSON.stringify(errorBody) : (JSON.stringify(result) ?? "null");
  return { status: 200, headers, body };
}

/** AWS validates an Invoke's fields before anything else and reports every violation in one ValidationException. */
function validate(req: IncomingMessage, rawName: string, query: string) {
  const problems: string[] = [];
  const functionName = safeDecode(rawName);
  const parsed = functionName === undefined ? undefined : FUNCTION_NAME.exec(functionName)?.groups;
  if (functionName !== undefined && functionName.length > 170) {
    problems.push(
      `Value '${functionName}' at 'functionName' failed to satisfy constraint: Member must have length less than or equal to 170`,
    );
  } else if (!parsed) {
    problems.push(
      `Value '${functionName ?? rawName}' at 'functionName' failed to satisfy constraint: Member must satisfy regular expression pattern: ${NAME_PATTERN}`,
    );
  }
  const invocationType = header(req, "x-amz-invocation-type") ?? "RequestResponse";
  if (!INVOCATION_TYPES.includes(invocationType)) {
    problems.push(
      `Value '${invocationType}' at 'invocationType' failed to satisfy constraint: Member must satisfy enum value set: [${INVOCATION_TYPES.join(", ")}]`,
    );
  }
  const logType = header(req, "x-amz-log-type") ?? "None";
  if (!LOG_TYPES.includes(logType)) {
    problems.push(
      `Value '${logType}' at 'logType' failed to satisfy constraint: Member must satisfy enum value set: [${LOG_TYPES.join(", ")}]`,
    );
  }
  const qualifierParam = new URLSearchParams(query).get("Qualifier") ?? undefined;
  if (qualifierParam !== undefined && !QUALIFIER.test(qualifierParam)) {
    problems.push(
      `Value '${qualifierParam}' at 'qualifier' failed to satisfy constraint: Member must satisfy regular expression pattern: (|[a-zA-Z0-9$_-]+)`,
    );
  }
  return { problems, parsed, invocationType, logType, qualifierParam };
}

/**
 * The last 4 KB of the invocation's log, base64, in Lambda's START/END/REPORT form. The local
 * functions log through the stack's logger, so their own lines are not in it.
 */
function logTail(requestId: string, ms: number, error: unknown): string {
  const lines = [
    `START RequestId: ${requestId} Version: $LATEST`,
    ...(error
      ? [`${new Date().toISOString()}\t${requestId}\tERROR\tInvoke Error \t${JSON.stringify(error)}`]
      : []),
    `END RequestId: ${requestId}`,
    `REPORT RequestId: ${requestId}\tDuration: ${ms.toFixed(2)} ms\tBilled Duration: ${Math.max(1, Math.ceil(ms))} ms\t`,
    "",
  ];
  const log = Buffer.from(lines.join("\n"), "utf8");
  return log.subarray(Math.max(0, log.length - LOG_TAIL_BYTES)).toString("base64");
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function safeDecode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The region the caller signed for (SigV4 credential scope), so a not-found ARN names the caller's region. */
function signedRegion(req: IncomingMessage): string | undefined {
  return /Credential=[^/,]+\/\d{8}\/([a-z0-9-]+)\/lambda\//.exec(header(req, "authorization") ?? "")?.[1];
}
