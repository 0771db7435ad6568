import { randomBytes, timingSafeEqual } from "node:crypto";
import { ulid } from "ulid";
import { loadDurable, stowDurable } from "../claims/durable-bodies.ts";
import { ClientError } from "../errors.ts";
import type { TokenCompleted, TokenView, WaitToken } from "../job/durable.ts";
import { depthIssueMessage, tooDeepAt } from "../job/json-depth.ts";
import { MAX_PAYLOAD_BYTES } from "../job/schemas.ts";
import { isTerminal } from "../job/status.ts";
import type { Engine } from "../services/engine-services.ts";
import type { JobItem } from "../store/job-item.ts";
import { getJob } from "../store/read-ops.ts";
import { completeToken, getToken, putToken, type TokenItem, tokenSecretHash } from "../store/token-ops.ts";
import type { DurableDeps } from "./durable-deps.ts";
import { resumeWaitingJob } from "./resume-waiting.ts";

/** A token's item outlives its timeout by a week, for GET /tokens/{id} and a late caller's 409. */
const TOKEN_KEPT_AFTER_TIMEOUT_S = 7 * 86_400;

/**
 * A new token for the job's step `name` (ctx.createToken, lib/durable/durable-run.ts): its item,
 * keeping its secret's hash, put; the token with its url (which carries the secret) returned.
 */
export async function putWaitToken(
  deps: Pick<DurableDeps, "store" | "clock" | "tokenUrlBase">,
  item: Pick<JobItem, "id" | "queue">,
  name: string,
  timeoutSeconds: number,
): Promise<WaitToken> {
  const now = deps.clock.now();
  const id = `tok_${ulid(now)}`;
  const secret = randomBytes(24).toString("base64url");
  const timeoutAt = now + Math.round(timeoutSeconds * 1000);
  await putToken(deps.store, {
    id,
    jobId: item.id,
    queue: item.queue,
    step: name,
    secretHash: tokenSecretHash(secret),
    createdAt: now,
    timeoutAt,
    expiresAt: Math.ceil(timeoutAt / 1000) + TOKEN_KEPT_AFTER_TIMEOUT_S,
  });
  const base = (deps.tokenUrlBase() ?? "").replace(/\/+$/, "");
  return { id, url: `${base}/tokens/${id}?secret=${secret}` };
}

/** Token ids are `tok_` and a ULID (lib/durable/durable-run.ts): anything else names none, unread. */
const TOKEN_ID = /^tok_[0-9A-HJKMNP-TV-Z]{26}$/;

const iso = (ms: number) => new Date(ms).toISOString();

async function tokenOr404(engine: Pick<Engine, "store">, id: string): Promise<TokenItem> {
  const token = TOKEN_ID.test(id) ? await getToken(engine.store, id) : undefined;
  if (!token) throw new ClientError("not_found", `token ${id.slice(0, 40)} not found`);
  return token;
}

/** The token's state: a pending token of an ended job (cancelled, or dead) can no longer be completed. */
export async function tokenView(
  engine: Pick<Engine, "store" | "claims" | "clock">,
  id: string,
): Promise<TokenView> {
  const token = await tokenOr404(engine, id);
  let status: TokenView["status"] = token.status;
  if (status === "pending") {
    const job = await getJob(engine.store, token.jobId);
    if (!job || isTerminal(job.status)) status = "cancelled";
    else if (token.timeoutAt <= engine.clock.now()) status = "timed-out";
  }
  const json =
    token.status === "completed" ? await loadDurable(engine.claims, token.jobId, token) : undefined;
  return {
    id: token.id,
    jobId: token.jobId,
    step: token.step,
    status,
    createdAt: iso(token.createdAt),
    timeoutAt: iso(token.timeoutAt),
    ...(token.completedAt !== undefined ? { completedAt: iso(token.completedAt) } : {}),
    ...(json !== undefined ? { data: JSON.parse(json) } : {}),
  };
}

function secretMatches(token: TokenItem, secret: string | undefined): boolean {
  if (!secret) return false;
  const given = Buffer.from(tokenSecretHash(secret), "hex");
  return timingSafeEqual(given, Buffer.from(token.secretHash, "hex"));
}

/** Why a token can't be completed now, or undefined when it can. */
function refusal(token: TokenItem, now: number, jobEnded: string | undefined): string | undefined {
  if (token.status === "completed") return `token ${token.id} is already completed`;
  if (token.status === "cancelled") return `token ${token.id} lost its job's race: another branch won`;
  if (token.timeoutAt <= now) return `token ${token.id} timed out at ${iso(token.timeoutAt)}`;
  if (jobEnded) return `token ${token.id}'s job is ${jobEnded}`;
  return undefined;
}

/**
 * A token's one completion (POST /tokens/{id}?secret=…), then its job's resume if it waits already
 * (a job still running resumes itself: lib/durable/durable-suspend.ts). Unknown 404, a wrong or
 * missing secret 403, completed, timed out or its job ended 409, data nested over MAX_JSON_DEPTH
 * 400, over 1 MiB 413: each before anything is written.
 */
export async function completeWaitToken(
  engine: Pick<Engine, "store" | "claims" | "transport" | "clock" | "metrics">,
  id: string,
  secret: string | undefined,
  data: unknown,
): Promise<TokenCompleted> {
  const token = await tokenOr404(engine, id);
  if (!secretMatches(token, secret))
    throw new ClientError("forbidden", "this token's url (with its secret) is needed to complete it");
  // Checked as payloads are, before anything recurses into it (JSON.stringify overflows a few thousand deep).
  const deep = tooDeepAt(data);
  if (deep)
    throw new ClientError("validation_error", `a token's data is ${depthIssueMessage()}`, [
      { path: ["data", ...deep].join("."), message: depthIssueMessage() },
    ]);
  const json = JSON.stringify(data ?? null);
  if (Buffer.byteLength(json) > MAX_PAYLOAD_BYTES)
    throw new ClientError(
      "payload_too_large",
      `a token's data is at most ${MAX_PAYLOAD_BYTES} bytes of JSON`,
    );
  const job = await getJob(engine.store, token.jobId);
  const ended = !job ? "gone" : isTerminal(job.status) ? job.status : undefined;
  const now = engine.clock.now();
  const refused = refusal(token, now, ended);
  if (refused) throw new ClientError("conflict", refused);
  const keepUntil = Math.max(token.expiresAt * 1000, now);
  // Each completion's object has a name of its own: two racing completions never write one key, and
  // the token names the object of the one whose completeToken won (a loser's is never read, and expires).
  const part = `token-${token.id}-${randomBytes(9).toString("base64url")}` as const;
  const body = await stowDurable(engine.claims, { id: token.jobId, part }, json, now, keepUntil);
  const done = await completeToken(engine.store, id, token.secretHash, body);
  if (!done.completed) {
    const current = done.current ?? token;
    throw new ClientError(
      "conflict",
      refusal(current, engine.clock.now(), ended) ?? `token ${id} changed; look again`,
    );
  }
  const resumed = await resumeWaitingJob(engine, { id: token.jobId, queue: token.queue }, { token: id });
  return { id, jobId: token.jobId, status: "completed", resumed };
}
