import { httpTransport } from "./http-transport.ts";
import type { Transport } from "./transport.ts";

/**
 * The transport of a client created without one (`createClient<typeof app>()`): the HTTP API at
 * SKYFORGE_ENDPOINT, a local stack's http://127.0.0.1:3000 or a stage's API URL, signed as
 * httpTransport signs (the AWS credential chain; fixed local credentials on loopback).
 */
export function environmentTransport(env: Record<string, string | undefined> = process.env): Transport {
  const url = env.SKYFORGE_ENDPOINT;
  if (!url) {
    throw new Error(
      "createClient(): no transport: pass { transport } (httpTransport, or invokeTransport from @skyforge/client/invoke), or set SKYFORGE_ENDPOINT to the API's URL",
    );
  }
  return httpTransport({ url });
}
