import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { LOOPBACK } from "../../local/emulators.ts";

export type AwsService = "dynamodb" | "sqs" | "lambda" | "s3";

/** One AWS API call a process made, as its SDK sent it. */
export interface RecordedCall {
  service: AwsService;
  /** The API operation: "UpdateItem", "SendMessageBatch", "GetEventSourceMapping". */
  operation: string;
  /** What it acts on, as the request names it. */
  target: {
    tableName?: string;
    indexName?: string;
    /** A DynamoDB item call's partition key (`Key.pk`), which IAM's dynamodb:LeadingKeys checks. */
    partitionKey?: string;
    /**
     * A DynamoDB item call's top-level attribute names, as IAM's dynamodb:Attributes sees them: the
     * key's, and the first name of every path its expressions name (`#waiting.#token` is `waiting`).
     * `all` when it has the whole item returned (a read without a projection, ReturnValues ALL_OLD
     * or ALL_NEW, ReturnValuesOnConditionCheckFailure ALL_OLD), which no attribute list allows.
     */
    attributes?: string[] | "all";
    /** A DynamoDB write's ReturnValues, NONE when it sends none (IAM's dynamodb:ReturnValues). */
    returnValues?: string;
    queueUrl?: string;
    eventSourceMappingUuid?: string;
    /** S3, path-style: the bucket and the object's key. */
    bucket?: string;
    key?: string;
  };
  /** The answer's HTTP status. */
  status: number;
}

/** Answers Lambda API calls itself: there is no Lambda emulator to forward them to. */
export type LambdaResponder = (call: { method: string; path: string; body: string }) => {
  status: number;
  body: unknown;
};

export interface AwsCallRecorder {
  /** What to set as AWS_ENDPOINT_URL_DYNAMODB, _SQS, _LAMBDA and _S3. */
  endpoints: Record<AwsService, string>;
  calls: RecordedCall[];
  /** The calls recorded since the last take. */
  take(): RecordedCall[];
  stop(): Promise<void>;
}

/**
 * A recording proxy on loopback, one port per service: it notes each request's operation (the
 * `X-Amz-Target` of the JSON protocols, `Action=` of SQS's query protocol, the REST path of
 * Lambda's, the method and path-style object of S3's) and the resource it names, then forwards the
 * bytes unchanged (signature included; the Host becomes the emulator's) to the emulator and its
 * answer back. A process whose endpoints point here can make no AWS call that goes unrecorded.
 */
export async function startAwsCallRecorder(targets: {
  dynamodb: string;
  sqs: string;
  s3: string;
  lambda: LambdaResponder;
}): Promise<AwsCallRecorder> {
  const calls: RecordedCall[] = [];
  let taken = 0;
  const servers: Server[] = [];
  const listen = async (
    service: AwsService,
    handle: (req: IncomingMessage, body: Buffer) => Promise<Answer>,
  ) => {
    const server = createServer((req, res) => {
      readBody(req)
        .then(async (body) => {
          const answer = await handle(req, body);
          calls.push({ service, ...describeCall(service, req, body), status: answer.status });
          reply(res, answer);
        })
        .catch((err: unknown) => reply(res, { status: 502, headers: {}, body: Buffer.from(String(err)) }));
    });
    servers.push(server);
    server.listen(0, LOOPBACK);
    await once(server, "listening");
    return `http://${LOOPBACK}:${(server.address() as AddressInfo).port}`;
  };
  const endpoints = {
    dynamodb: await listen("dynamodb", (req, body) => forward(targets.dynamodb, req, body)),
    sqs: await listen("sqs", (req, body) => forward(targets.sqs, req, body)),
    s3: await listen("s3", (req, body) => forward(targets.s3, req, body)),
    lambda: await listen("lambda", async (req, body) => {
      const answer = targets.lambda({
        method: req.method ?? "GET",
        path: req.url ?? "/",
        body: body.toString(),
      });
      return {
        status: answer.status,
        headers: { "content-type": "application/json", "x-amzn-requestid": randomUUID() },
        body: Buffer.from(JSON.stringify(answer.body)),
      };
    }),
  };
  return {
    endpoints,
    calls,
    take() {
      const fresh = calls.slice(taken);
      taken = calls.length;
      return fresh;
    },
    async stop() {
      await Promise.all(
        servers.map((s) => {
          s.closeAllConnections();
          return new Promise<void>((resolve) => s.close(() => resolve()));
        }),
      );
    },
  };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function reply(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}

/** Sends the request on as it came; the emulators ignore the signature, which stays valid anyway. */
function forward(target: string, req: IncomingMessage, body: Buffer): Promise<Answer> {
  const url = new URL(target);
  return new Promise((resolve, reject) => {
    const out = request(
      // The emulator answers its own Host only (local/emulator-guard.ts); it checks no signature.
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: url.host },
      },
      (res) => {
        readBody(res).then(
          (answer) => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: answer }),
          reject,
        );
      },
    );
    out.on("error", reject);
    out.end(body);
  });
}

/** The operation and resource one request names, for each protocol these services speak. */
function describeCall(
  service: AwsService,
  req: IncomingMessage,
  body: Buffer,
): Pick<RecordedCall, "operation" | "target"> {
  if (service === "s3") {
    // Path-style REST: /{bucket}/{key…}; the method says which object operation.
    const [, bucket = "", ...key] = new URL(req.url ?? "/", "http://x").pathname.split("/");
    const operation = objectOperations[req.method ?? ""] ?? `${req.method} /${bucket}`;
    return { operation, target: { bucket, key: key.map(decodeURIComponent).join("/") } };
  }
  if (service === "lambda") {
    // REST: /2015-03-31/event-source-mappings/{UUID}, the method says which operation.
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const mapping = /^\/2015-03-31\/event-source-mappings\/([^/]+)\/?$/.exec(path);
    const operation = mappingOperations[req.method ?? ""];
    if (!mapping || !operation) return { operation: `${req.method} ${path}`, target: {} };
    return { operation, target: { eventSourceMappingUuid: decodeURIComponent(mapping[1] as string) } };
  }
  const amzTarget = req.headers["x-amz-target"];
  if (typeof amzTarget === "string") {
    // JSON protocols: "DynamoDB_20120810.UpdateItem", "AmazonSQS.SendMessageBatch".
    const input = JSON.parse(body.toString() || "{}") as Record<string, unknown>;
    return { operation: amzTarget.slice(amzTarget.indexOf(".") + 1), target: targetOf(input) };
  }
  // SQS's older query protocol: a form with Action=…&QueueUrl=….
  const form = new URLSearchParams(body.toString());
  return { operation: form.get("Action") ?? "unknown", target: targetOf(Object.fromEntries(form)) };
}

const objectOperations: Record<string, string> = {
  GET: "GetObject",
  PUT: "PutObject",
  HEAD: "HeadObject",
  DELETE: "DeleteObject",
};

const mappingOperations: Record<string, string> = {
  GET: "GetEventSourceMapping",
  PUT: "UpdateEventSourceMapping",
  DELETE: "DeleteEventSourceMapping",
};

/** The top-level attributes an item request names, or `all` when the whole item comes back. */
function attributesOf(input: Record<string, unknown>, keyNames: string[]): string[] | "all" {
  const whole =
    input.ReturnValues === "ALL_OLD" ||
    input.ReturnValues === "ALL_NEW" ||
    input.ReturnValuesOnConditionCheckFailure === "ALL_OLD" ||
    (input.UpdateExpression === undefined &&
      input.ConditionExpression === undefined &&
      input.ProjectionExpression === undefined);
  if (whole) return "all";
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const found = new Set(keyNames);
  for (const field of ["UpdateExpression", "ConditionExpression", "ProjectionExpression"]) {
    const expression = input[field];
    if (typeof expression !== "string") continue;
    // A path's first name is a placeholder not preceded by `.` (every name goes through one: lib/store/expression.ts).
    for (const m of expression.matchAll(/(^|[^.\w#])(#\w+)/g))
      found.add(names[m[2] as string] ?? (m[2] as string));
  }
  return [...found].sort();
}

function targetOf(input: Record<string, unknown>): RecordedCall["target"] {
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  const target: RecordedCall["target"] = {};
  const tableName = text(input.TableName);
  const indexName = text(input.IndexName);
  const queueUrl = text(input.QueueUrl);
  if (tableName) target.tableName = tableName;
  if (indexName) target.indexName = indexName;
  const key = input.Key as { pk?: { S?: unknown } } | undefined;
  const partitionKey = text(key?.pk?.S);
  if (partitionKey) target.partitionKey = partitionKey;
  if (key) {
    target.attributes = attributesOf(input, Object.keys(key));
    target.returnValues = text(input.ReturnValues) ?? "NONE";
  }
  if (queueUrl) target.queueUrl = queueUrl;
  return target;
}
