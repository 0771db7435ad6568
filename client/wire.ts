import { clip, SkyforgeTransportError } from "./errors.ts";
import type { ApiRequest, ApiResponse } from "./transport.ts";

/** What both transports put on the wire and read back, so an API request is the same request either way. */

/** RFC 3986 percent-encoding, the one SigV4 canonicalizes with (encodeURIComponent leaves !'()* alone). */
export const escapeRfc3986 = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** The query's given parameters, in a stable order. */
export function queryEntries(request: ApiRequest): [string, string][] {
  return Object.entries(request.query ?? {})
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The query string as sent: `queue=default&status=dead` ("" for none). */
export function rawQueryString(request: ApiRequest): string {
  return queryEntries(request)
    .map(([name, value]) => `${escapeRfc3986(name)}=${escapeRfc3986(value)}`)
    .join("&");
}

/** The body as sent: JSON text, or undefined for a request without one. */
export const bodyText = (request: ApiRequest): string | undefined =>
  request.body === undefined ? undefined : JSON.stringify(request.body);

/**
 * The answer as the client reads it. The API answers JSON, or nothing (204, HEAD); anything else was
 * answered by something in between (a proxy's error page), so it is a transport error.
 */
export function decodeAnswer(status: number, headers: Record<string, string>, text: string): ApiResponse {
  if (text === "") return { status, headers, body: undefined };
  try {
    return { status, headers, body: JSON.parse(text) };
  } catch {
    throw new SkyforgeTransportError(`HTTP ${status} with a body that is not JSON: ${clip(text)}`, {
      status,
      body: text,
    });
  }
}

/**
 * localhost, 127.0.0.0/8, ::1 and 127.0.0.0/8 mapped into IPv6 (::ffff:127.0.0.1, which the URL
 * parser writes ::ffff:7f00:1): where npm start listens, and where no AWS credentials are needed.
 */
export function isLoopbackUrl(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    host === "localhost" ||
    host === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) ||
    /^::ffff:(7f[0-9a-f]{2}:[0-9a-f]{1,4}|127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.test(host)
  );
}

/** An `http:` URL whose host isn't loopback. */
export const isPlainHttpOffMachine = (url: URL): boolean => url.protocol === "http:" && !isLoopbackUrl(url);

/**
 * Plain `http:` to a host that isn't loopback carries the signed request, its session token and its
 * payloads in the clear past every hop: refused unless the caller names `allowPlainHttp`. Loopback
 * (npm start) never leaves the machine; https is what a deployed API serves.
 */
export function refusePlainHttp(url: URL, allowPlainHttp: boolean | undefined): void {
  if (!isPlainHttpOffMachine(url) || allowPlainHttp === true) return;
  throw new Error(
    `refusing to send signed requests over plain http to ${url.host} (credentials and payloads would travel unencrypted): use https://, or pass allowPlainHttp: true to accept that`,
  );
}

/**
 * Credentials for the local stack, which checks no signature (as the README's Invoke example): signing
 * with them keeps one code path for both targets without needing an AWS account locally.
 */
export const LOCAL_CREDENTIALS = { accessKeyId: "local", secretAccessKey: "local" } as const;
export const LOCAL_REGION = "us-east-1";

/** The region of an execute-api URL: https://{id}.execute-api.{region}.amazonaws.com[.cn]. */
export function regionOfApiUrl(url: URL): string | undefined {
  return /^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$/.exec(url.hostname)?.[1];
}
