import { Sha256 } from "@aws-crypto/sha256-js";
import type { fromNodeProviderChain } from "@aws-sdk/credential-providers";
import { SignatureV4 } from "@smithy/signature-v4";
import { describeError, SkyforgeTransportError } from "./errors.ts";
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
  regionOfApiUrl,
} from "./wire.ts";

type SignerOptions = ConstructorParameters<typeof SignatureV4>[0];
/** AWS credentials, or a provider of them (what the AWS SDK's credential providers return). */
export type Credentials = SignerOptions["credentials"];

export interface HttpTransportOptions {
  /** The API's base URL: a stage's `api` output, or npm start's http://127.0.0.1:3000. */
  url: string;
  /** Defaults to the region in an execute-api URL, then AWS_REGION (loopback: us-east-1). */
  region?: string;
  /**
   * Defaults to the AWS credential chain (environment, SSO, profile, instance role…), loaded on the
   * first request. Against a loopback URL the default is fixed local credentials instead: the local
   * stack checks no signature, so no AWS account is needed.
   */
  credentials?: Credentials;
  /** The service signed for: "execute-api" (API Gateway). */
  service?: string;
  /** The signing clock (tests sign a fixed request at a fixed time). */
  now?: () => Date;
  /** Abandons a request after this long: API Gateway gives up after 30 s itself. Default 35 s. */
  timeoutMs?: number;
  /**
   * Sends over plain `http:` to a host that isn't loopback, which is refused otherwise: the signed
   * request, its session token included, would travel unencrypted.
   */
  allowPlainHttp?: boolean;
}

/**
 * The HTTP API through fetch, every request signed with SigV4 by @smithy/signature-v4 (the AWS SDK's
 * own signer). Signed: host, x-amz-date, the session token when there is one, and for a request with
 * a body its content-type and content-length (as the AWS SDK signs them). Path segments arrive here
 * escaped once; the signer escapes them again, as SigV4 wants for every service but S3.
 */
export function httpTransport(options: HttpTransportOptions): Transport {
  const base = new URL(options.url);
  refusePlainHttp(base, options.allowPlainHttp);
  const loopback = isLoopbackUrl(base);
  const region =
    options.region ?? regionOfApiUrl(base) ?? process.env.AWS_REGION ?? (loopback ? LOCAL_REGION : undefined);
  if (!region) {
    throw new Error(
      `no region to sign requests to ${base.origin} for: pass region, or set AWS_REGION (only an execute-api URL names its own)`,
    );
  }
  const signer = new SignatureV4({
    service: options.service ?? "execute-api",
    region,
    credentials: options.credentials ?? (loopback ? LOCAL_CREDENTIALS : credentialChain()),
    sha256: Sha256,
    // API Gateway needs no x-amz-content-sha256 header: the payload hash is in the signature anyway.
    applyChecksum: false,
  });
  const basePath = base.pathname.replace(/\/+$/, "");
  const now = options.now ?? (() => new Date());
  const timeoutMs = options.timeoutMs ?? 35_000;

  return {
    async send(request: ApiRequest): Promise<ApiResponse> {
      const body = bodyText(request);
      const path = `${basePath}${request.path}`;
      const query = rawQueryString(request);
      const headers: Record<string, string> = { ...request.headers, host: base.host };
      if (body !== undefined) {
        headers["content-type"] = "application/json";
        headers["content-length"] = String(Buffer.byteLength(body));
      }
      let signed: Record<string, string>;
      try {
        const out = await signer.sign(
          {
            method: request.method,
            protocol: base.protocol,
            hostname: base.hostname,
            ...(base.port ? { port: Number(base.port) } : {}),
            path,
            query: Object.fromEntries(queryEntries(request)),
            headers,
            ...(body !== undefined ? { body } : {}),
          },
          { signingDate: now() },
        );
        signed = out.headers;
      } catch (err) {
        throw new SkyforgeTransportError(
          `could not sign the request to ${base.origin}: ${describeError(err)}`,
          undefined,
          {
            cause: err,
          },
        );
      }
      // fetch sets host and content-length itself, to the same values as signed above.
      const { host: _host, "content-length": _length, ...sent } = signed;
      let res: Response;
      let text: string;
      try {
        res = await fetch(`${base.origin}${path}${query ? `?${query}` : ""}`, {
          method: request.method,
          headers: sent,
          ...(body !== undefined ? { body } : {}),
          signal: AbortSignal.timeout(timeoutMs),
          // A redirect is never the API's answer, and following one would hand the signed request and
          // its x-amz-security-token to whatever host the Location names.
          redirect: "error",
        });
        text = await res.text();
      } catch (err) {
        if (isRedirectRefusal(err)) {
          throw new SkyforgeTransportError(
            `${base.origin} answered ${request.method} ${request.path} with a redirect, which the client does not follow (it would send the signed request, credentials included, elsewhere): check the API URL`,
            undefined,
            { cause: err },
          );
        }
        throw new SkyforgeTransportError(
          `no answer from ${base.origin} to ${request.method} ${request.path}: ${describeError(err)}`,
          undefined,
          { cause: err },
        );
      }
      return decodeAnswer(res.status, endToEndHeaders(res.headers), text);
    },
  };
}

/** fetch's failure for `redirect: "error"` meeting a 3xx: a TypeError whose cause says so (undici). */
const isRedirectRefusal = (err: unknown): boolean =>
  err instanceof TypeError && err.cause instanceof Error && /redirect/i.test(err.cause.message);

/**
 * The answer's headers without those about its framing on this connection: fetch has already
 * undone the transfer and content encodings, so the body they describe is not the one handed on.
 */
const FRAMING = new Set([
  "content-length",
  "content-encoding",
  "transfer-encoding",
  "connection",
  "keep-alive",
]);
function endToEndHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => !FRAMING.has(name)));
}

/** The AWS SDK's Node credential chain, imported on first use so the local path never loads it. */
function credentialChain(): NonNullable<Credentials> {
  let chain: Promise<ReturnType<typeof fromNodeProviderChain>> | undefined;
  return async () => {
    chain ??= import("@aws-sdk/credential-providers").then((m) => m.fromNodeProviderChain());
    return (await chain)();
  };
}
