import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The secret that lets a request through `skyforge console`'s proxy, which signs with the operator's
 * credentials. A loopback port is open to every local user and to every web page (an `<img>` or a
 * `no-cors` fetch sends no Origin), so Host and Origin alone can't tell the operator's own page from
 * them. The proxy makes a token per run and prints it in the URL's fragment, which the browser never
 * sends (so it stays out of logs and Referer); the page keeps it and sends it in this header on every
 * API call (console/api.js). Only someone who read the CLI's output has it.
 */
export const TOKEN_HEADER = "x-skyforge-console-token";

/** 256 random bits, base64url (43 characters): unguessable, and safe in a URL fragment as it is. */
export function newConsoleToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Why the request can't go on, with the status to answer it with, or undefined when it may. */
export interface Refusal {
  status: 401 | 403;
  code: "unauthorized" | "forbidden";
  message: string;
}

/**
 * Fetch metadata: what a browser says about who made the request. `same-origin` is the console's own
 * page, `none` is the person typing the address; `same-site` and `cross-site` are other pages
 * (another port on 127.0.0.1 is same-site). Programs send none of it, and they are held by the token.
 */
const OWN_SITES = new Set(["same-origin", "none"]);

/** Checks an API call (not a console file) before anything is read, signed or sent. */
export function apiCallRefusal(req: IncomingMessage, token: string): Refusal | undefined {
  const site = req.headers["sec-fetch-site"];
  if (site !== undefined && !OWN_SITES.has(site.toLowerCase())) {
    return {
      status: 403,
      code: "forbidden",
      message: "a request made by another page (Sec-Fetch-Site is not same-origin) is refused",
    };
  }
  const given = req.headers[TOKEN_HEADER];
  if (typeof given !== "string" || !sameSecret(given, token)) {
    return {
      status: 401,
      code: "unauthorized",
      message:
        "this console answers only the page opened at the address `skyforge console` printed (with its #token=…)",
    };
  }
  return undefined;
}

/**
 * Compared in constant time: the digests have the same length whatever was sent, so neither the
 * length nor the first differing byte of a guess shows in the time the answer takes.
 */
function sameSecret(given: string, token: string): boolean {
  const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
  return timingSafeEqual(digest(given), digest(token));
}
