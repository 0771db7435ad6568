import { createHmac, timingSafeEqual } from "node:crypto";
import {
  type JobTokenClaims,
  type QueueTokenClaims,
  readTokenClaims,
  type TokenClaims,
} from "../job/realtime-wire.ts";

/**
 * Subscription tokens (docs/architecture.md §25): the claims (lib/job/realtime-wire.ts) as base64url
 * JSON, then their HMAC-SHA256 under the stack's realtime secret. Read-only by construction: what a
 * token grants is decided by the policy (policy.ts) from these claims alone.
 */
const signatureOf = (body: string, secret: string) =>
  createHmac("sha256", secret).update(body).digest("base64url");

export function mintToken(
  claims: Omit<JobTokenClaims, "v"> | Omit<QueueTokenClaims, "v">,
  secret: string,
): string {
  const body = Buffer.from(JSON.stringify({ v: 1, ...claims })).toString("base64url");
  return `${body}.${signatureOf(body, secret)}`;
}

export type TokenCheck = { ok: true; claims: TokenClaims } | { ok: false; reason: string };

/** A token this secret signed, whose claims parse and whose expiry is after `now`. */
export function verifyToken(token: string, secret: string, now: number): TokenCheck {
  const [body, signature] = token.split(".");
  const claims = readTokenClaims(token);
  if (!body || !signature || !claims) return { ok: false, reason: "not a subscription token" };
  const expected = Buffer.from(signatureOf(body, secret));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given))
    return { ok: false, reason: "the token's signature does not match" };
  if (claims.exp <= now) return { ok: false, reason: "the token has expired" };
  return { ok: true, claims };
}
