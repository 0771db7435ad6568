/**
 * How the client reaches skyforge. Every operation is an HTTP API request (the routes of
 * lib/api/routes.ts); a transport carries it and brings back the answer, untouched.
 * - http-transport.ts: the HTTP API, signed with SigV4 (npm start's URL, or a stage's API URL);
 * - invoke-transport.ts: Lambda Invoke of the API function with an API Gateway v2 event.
 */
export interface ApiRequest {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";
  /** The route's path with its parameters filled in and escaped: "/jobs/01K…/cancel". */
  path: string;
  query?: Record<string, string | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  /** Extra request headers, lower-case names: the producer's W3C `traceparent` and `tracestate`. */
  headers?: Record<string, string>;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** The parsed JSON body; undefined for an empty one (204, HEAD). */
  body: unknown;
}

export interface Transport {
  send(request: ApiRequest): Promise<ApiResponse>;
}
