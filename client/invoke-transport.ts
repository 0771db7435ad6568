import { randomUUID } from "node:crypto";
import type { InvokeCommandOutput, LambdaClient } from "@aws-sdk/client-lambda";
import { apiRouteMatcher, type RouteTarget } from "../lib/api/route-keys.ts";
import { clip, describeError, SkyforgeTransportError } from "./errors.ts";
import type { ApiRequest, ApiResponse, Transport } from "./transport.ts";
import {
  bodyText,
  decodeAnswer,
  isLoopbackUrl,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  queryEntries,
  rawQueryString,
  refusePlainHttp,
} from "./wire.ts";

export interface InvokeTransportOptions {
  /** The API function: a stage's `apiFunction` output (name or ARN), or "api" on npm start. */
  functionName: string;
  /** The client to invoke with; it stays the caller's (close() leaves it open). */
  lambda?: LambdaClient;
  /**
   * Without `lambda`: where the Invoke API is. npm start serves it on its own URL; against that
   * loopback endpoint the transport signs with fixed local credentials, so no AWS account is needed.
   * Without either, the SDK's defaults (region and credentials from the environment).
   */
  endpoint?: string;
  region?: string;
  /**
   * Lets `endpoint` be plain `http:` to a host that isn't loopback, which is refused otherwise: the
   * signed request, its session token included, would travel unencrypted.
   */
  allowPlainHttp?: boolean;
  /**
   * Abandons an Invoke after this long, as the HTTP transport does (API Gateway gives up after 30 s;
   * a direct Invoke would wait out the function's whole timeout). Default 35 s.
   */
  timeoutMs?: number;
}

export interface InvokeTransport extends Transport {
  /** Releases the Lambda client this transport made (not one it was given). */
  close(): void;
}

/**
 * The HTTP API without HTTP: Lambda Invoke of the API function (functions/api.ts) with the API
 * Gateway v2 (payload format 2.0) event API Gateway would have sent for the request, and its proxy
 * result read back as the answer. IAM authorizes the invoke (`lambda:InvokeFunction`) instead of the
 * route, so the event carries a stand-in IAM authorizer block; the API reads nothing from it.
 */
export function invokeTransport(options: InvokeTransportOptions): InvokeTransport {
  if (options.endpoint && !options.lambda) refusePlainHttp(new URL(options.endpoint), options.allowPlainHttp);
  // Made at the first invoke: the SDK is loaded only by a caller that invokes.
  let owned: Promise<LambdaClient> | undefined;
  const lambdaClient = (): Promise<LambdaClient> => {
    if (options.lambda) return Promise.resolve(options.lambda);
    owned ??= lambdaClientFor(options);
    return owned;
  };
  const functionName = options.functionName;
  const timeoutMs = options.timeoutMs ?? 35_000;

  return {
    close: () => {
      owned?.then((client) => client.destroy()).catch(() => {});
    },
    async send(request: ApiRequest): Promise<ApiResponse> {
      const route = apiRouteMatcher.find(request.method, request.path);
      if (!route) {
        // What API Gateway does: nothing runs for a request no route key names.
        throw new SkyforgeTransportError(
          `no route of the API takes ${request.method} ${clip(request.path)}; deployed, API Gateway answers 404`,
          { status: 404, body: undefined },
        );
      }
      // The SDK's first load is not the invoke's time: the timeout starts once it is there.
      const [lambda, { InvokeCommand }] = await Promise.all([lambdaClient(), lambdaSdk()]);
      let out: InvokeCommandOutput;
      const abortSignal = AbortSignal.timeout(timeoutMs);
      try {
        out = await lambda.send(
          new InvokeCommand({
            FunctionName: functionName,
            Payload: new TextEncoder().encode(JSON.stringify(apiGatewayEvent(request, route))),
          }),
          { abortSignal },
        );
      } catch (err) {
        const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        const why = abortSignal.aborted
          ? `no answer within ${timeoutMs} ms (${describeError(err)})`
          : describeError(err);
        throw new SkyforgeTransportError(
          `could not invoke ${functionName} for ${request.method} ${request.path}: ${why}`,
          status === undefined ? undefined : { status, body: undefined },
          { cause: err },
        );
      }
      const text = new TextDecoder().decode(out.Payload ?? new Uint8Array());
      if (out.FunctionError) {
        throw new SkyforgeTransportError(
          `the API function ${functionName} failed (${out.FunctionError}): ${clip(text)}`,
          { status: out.StatusCode ?? 200, body: parseOrText(text) },
        );
      }
      return proxyAnswer(functionName, text);
    },
  };
}

/**
 * `@aws-sdk/client-lambda`, imported on first use: it is slow to load, and a process that never
 * invokes (the CLI over HTTP) never needs it.
 */
const lambdaSdk = () => import("@aws-sdk/client-lambda");

async function lambdaClientFor(options: InvokeTransportOptions): Promise<LambdaClient> {
  const { LambdaClient } = await lambdaSdk();
  if (options.endpoint && isLoopbackUrl(new URL(options.endpoint))) {
    return new LambdaClient({
      endpoint: options.endpoint,
      region: options.region ?? process.env.AWS_REGION ?? LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
  }
  return new LambdaClient({
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    ...(options.region ? { region: options.region } : {}),
  });
}

/**
 * The event API Gateway (HTTP API, payload format 2.0) sends the function for this request: under
 * the route key it matched, with that route's path parameters (the function runs no route for any
 * other key, `$default` included).
 */
export function apiGatewayEvent(request: ApiRequest, route: RouteTarget): Record<string, unknown> {
  const body = bodyText(request);
  const query = queryEntries(request);
  const headers: Record<string, string> = {
    ...request.headers,
    "user-agent": "skyforge-client (lambda invoke)",
    ...(body !== undefined
      ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
      : {}),
  };
  const now = Date.now();
  return {
    version: "2.0",
    routeKey: route.routeKey,
    rawPath: request.path,
    rawQueryString: rawQueryString(request),
    headers,
    ...(query.length ? { queryStringParameters: Object.fromEntries(query) } : {}),
    ...(Object.keys(route.pathParameters).length ? { pathParameters: route.pathParameters } : {}),
    requestContext: {
      accountId: "invoke",
      apiId: "invoke",
      authorizer: {
        iam: {
          accessKey: "invoke",
          accountId: "invoke",
          callerId: "invoke",
          cognitoIdentity: null,
          principalOrgId: null,
          userArn: "invoke",
          userId: "invoke",
        },
      },
      domainName: "invoke",
      domainPrefix: "invoke",
      http: {
        method: request.method,
        path: request.path,
        protocol: "HTTP/1.1",
        sourceIp: "127.0.0.1",
        userAgent: headers["user-agent"],
      },
      requestId: randomUUID(),
      routeKey: route.routeKey,
      stage: "$default",
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    ...(body !== undefined ? { body } : {}),
    isBase64Encoded: false,
  };
}

/** The function's proxy result ({ statusCode, headers, body, isBase64Encoded }) as the answer. */
function proxyAnswer(functionName: string, text: string): ApiResponse {
  const result = parseOrText(text);
  if (
    typeof result !== "object" ||
    result === null ||
    typeof (result as { statusCode?: unknown }).statusCode !== "number"
  ) {
    throw new SkyforgeTransportError(
      `${functionName} did not answer as the API function does (no statusCode); is it the stage's apiFunction? It answered: ${clip(text)}`,
      { status: 200, body: result },
    );
  }
  const { statusCode, headers, body, isBase64Encoded } = result as {
    statusCode: number;
    headers?: Record<string, unknown>;
    body?: unknown;
    isBase64Encoded?: boolean;
  };
  const lowered = Object.fromEntries(
    Object.entries(headers ?? {}).map(([name, value]) => [name.toLowerCase(), String(value)]),
  );
  const raw = typeof body === "string" ? body : "";
  return decodeAnswer(
    statusCode,
    lowered,
    isBase64Encoded ? Buffer.from(raw, "base64").toString("utf8") : raw,
  );
}

function parseOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
