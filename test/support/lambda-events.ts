import { randomUUID } from "node:crypto";
import type { Message, MessageAttributeValue } from "@aws-sdk/client-sqs";
import type {
  APIGatewayProxyEventV2,
  APIGatewayProxyEventV2WithIAMAuthorizer,
  ScheduledEvent,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
} from "aws-lambda";
import { apiRouteMatcher } from "../../lib/api/route-keys.ts";

/**
 * Events in the shapes AWS hands a Lambda function (see @types/aws-lambda), built from real parts
 * where there are some: an SQS record from a message really received from the queue.
 */
export const TEST_ACCOUNT = "000000000000";
export const TEST_REGION = "us-east-1";

/** A received message as the SQS event source mapping delivers it: every attribute a string. */
export function sqsRecord(message: Message, queueArn: string, region = TEST_REGION): SQSRecord {
  const a = message.Attributes ?? {};
  const required = (name: string) => {
    const value = a[name as keyof typeof a];
    if (value === undefined)
      throw new Error(`receive the message with MessageSystemAttributeNames ["All"]: ${name} is missing`);
    return value;
  };
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body ?? "",
    attributes: {
      ApproximateReceiveCount: required("ApproximateReceiveCount"),
      SentTimestamp: required("SentTimestamp"),
      SenderId: required("SenderId"),
      ApproximateFirstReceiveTimestamp: required("ApproximateFirstReceiveTimestamp"),
    },
    messageAttributes: messageAttributes(message.MessageAttributes ?? {}),
    md5OfBody: message.MD5OfBody ?? "",
    eventSource: "aws:sqs",
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

function messageAttributes(attrs: Record<string, MessageAttributeValue>): SQSMessageAttributes {
  return Object.fromEntries(
    Object.entries(attrs).map(([name, v]) => [
      name,
      {
        dataType: v.DataType ?? "String",
        ...(v.StringValue !== undefined ? { stringValue: v.StringValue } : {}),
        ...(v.BinaryValue !== undefined
          ? { binaryValue: Buffer.from(v.BinaryValue).toString("base64") }
          : {}),
        stringListValues: [],
        binaryListValues: [],
      },
    ]),
  );
}

export const sqsEvent = (records: SQSRecord[]): SQSEvent => ({ Records: records });

export interface HttpRequest {
  method: string;
  /** The raw path as the client sent it. */
  path: string;
  /**
   * The declared route it matched ("/jobs/{id}"); by default the one API Gateway would match. It
   * invokes nothing for a path no route names (there is no `$default` route), so neither does this,
   * unless asked for "$default" (a hand-made event: the function must run no route for it).
   */
  route?: string;
  query?: string;
  headers?: Record<string, string>;
  /** Sent as JSON; API Gateway hands the body to the function base64-encoded. */
  json?: unknown;
}

/**
 * An HTTP API (API Gateway v2) event, payload format 2.0, for a route with IAM (SigV4) auth: header
 * names lower-cased, repeated query names joined by commas, path parameters taken from the route
 * key's `{name}` segments, and the caller's IAM identity under requestContext.authorizer.iam.
 */
export function httpApiEvent(req: HttpRequest, now = new Date()): APIGatewayProxyEventV2WithIAMAuthorizer {
  const { method } = req;
  const found = req.route ? undefined : apiRouteMatcher.find(method, req.path);
  if (!req.route && !found)
    throw new Error(`no route takes ${method} ${req.path}: API Gateway would invoke nothing`);
  const routeKey =
    req.route === "$default"
      ? "$default"
      : req.route
        ? `${method} ${req.route}`
        : (found?.routeKey as string);
  const apiId = "a1b2c3d4e5";
  const domainName = `${apiId}.execute-api.${TEST_REGION}.amazonaws.com`;
  const body = req.json === undefined ? undefined : Buffer.from(JSON.stringify(req.json)).toString("base64");
  const headers: Record<string, string> = {
    accept: "application/json",
    authorization: `AWS4-HMAC-SHA256 Credential=AKIALOCALCALLER00000/${now.toISOString().slice(0, 10).replaceAll("-", "")}/${TEST_REGION}/execute-api/aws4_request, SignedHeaders=host;x-amz-date, Signature=${"0".repeat(64)}`,
    host: domainName,
    "user-agent": "aws-sdk-js/3 skyforge-test",
    "x-amz-date": now.toISOString().replace(/[-:]|\.\d{3}/g, ""),
    "x-amzn-trace-id": `Root=1-${Math.floor(now.getTime() / 1000).toString(16)}-${"0".repeat(24)}`,
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-port": "443",
    "x-forwarded-proto": "https",
    ...(body !== undefined
      ? { "content-type": "application/json", "content-length": String(Buffer.from(body, "base64").length) }
      : {}),
    ...Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
  };
  const query = req.query ?? "";
  const joined = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(query)) {
    const before = joined.get(name);
    joined.set(name, before === undefined ? value : `${before},${value}`);
  }
  const route = routeKey.slice(routeKey.indexOf(" ") + 1);
  const pathParameters = req.route === "$default" ? undefined : pathParametersOf(route, req.path);
  return {
    version: "2.0",
    routeKey,
    rawPath: req.path,
    rawQueryString: query,
    headers,
    ...(joined.size ? { queryStringParameters: Object.fromEntries(joined) } : {}),
    ...(pathParameters ? { pathParameters } : {}),
    requestContext: {
      accountId: TEST_ACCOUNT,
      apiId,
      authorizer: {
        iam: {
          accessKey: "AKIALOCALCALLER00000",
          accountId: TEST_ACCOUNT,
          callerId: "AIDALOCALCALLER000000",
          cognitoIdentity: null,
          principalOrgId: "o-local",
          userArn: `arn:aws:iam::${TEST_ACCOUNT}:user/producer`,
          userId: "AIDALOCALCALLER000000",
        },
      },
      domainName,
      domainPrefix: apiId,
      http: {
        method,
        path: req.path,
        protocol: "HTTP/1.1",
        sourceIp: "203.0.113.7",
        userAgent: headers["user-agent"] as string,
      },
      requestId: randomUUID(),
      routeKey,
      stage: "$default",
      time: apiGatewayTime(now),
      timeEpoch: now.getTime(),
    },
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: body !== undefined,
  };
}

/**
 * The same event for a route without auth (the token callback, POST /tokens/{id}): API Gateway
 * passes no authorizer, and the caller signed nothing.
 */
export function unauthenticatedHttpApiEvent(req: HttpRequest, now = new Date()): APIGatewayProxyEventV2 {
  const event = httpApiEvent(req, now);
  const { authorizer: _authorizer, ...requestContext } = event.requestContext;
  const { authorization: _signature, "x-amz-date": _date, ...headers } = event.headers;
  return { ...event, headers, requestContext };
}

/** The route's `{name}` segments, as API Gateway fills them from the path. */
function pathParametersOf(route: string, path: string): Record<string, string> | undefined {
  if (!route.includes("{")) return undefined;
  const names = route.split("/");
  const values = path.split("/");
  const params: Record<string, string> = {};
  names.forEach((segment, i) => {
    const name = /^\{(.+)\}$/.exec(segment)?.[1];
    if (name) params[name] = values[i] ?? "";
  });
  return params;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** API Gateway's requestContext.time: "23/Nov/2025:18:29:00 +0000". */
function apiGatewayTime(d: Date): string {
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

/**
 * What EventBridge Scheduler delivers to a Lambda target when the schedule gives no input: a
 * "Scheduled Event" from aws.scheduler naming the schedule.
 */
export function schedulerEvent(
  scheduleName: string,
  now = new Date(),
): ScheduledEvent<Record<string, never>> {
  return {
    version: "0",
    id: randomUUID(),
    "detail-type": "Scheduled Event",
    source: "aws.scheduler",
    account: TEST_ACCOUNT,
    time: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
    region: TEST_REGION,
    resources: [`arn:aws:scheduler:${TEST_REGION}:${TEST_ACCOUNT}:schedule/default/${scheduleName}`],
    detail: {},
  };
}

/**
 * What SST's CronV2 really gives its schedule as the target's input: `JSON.stringify(args.event ||
 * {})`, so with no `event` declared (infra/schedules.ts declares none) every run receives `{}`.
 */
export const sstCronInput = (): Record<string, never> => ({});
