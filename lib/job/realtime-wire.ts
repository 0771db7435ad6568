import * as z from "zod/mini";
import { jobStatuses } from "./status.ts";

/**
 * Realtime's wire (docs/architecture.md §25): the topics, the events and the token's readable part,
 * shared by the engine, the local broker, the authorizer and the browser client (which imports this
 * file and nothing that runs the engine, so it holds no Node API).
 */

/** A stream chunk's bound once serialized as JSON: one MQTT message each, under IoT Core's 128 KB. */
export const MAX_STREAM_CHUNK_BYTES = 32 * 1024;

/** A topic's segments: a job id, a group id, a client id. Nothing MQTT reads as a wildcard or level. */
const SEGMENT = /^[A-Za-z0-9_.:-]{1,128}$/;
export const isTopicSegment = (s: string): boolean => SEGMENT.test(s);

/** Where a job's events go: its status changes, steps and stream chunks. */
export const jobTopic = (prefix: string, jobId: string) => `${prefix}/jobs/${jobId}`;
/** Where a group's children's ends and its progress go, for a subscription asked `{ group: true }`. */
export const groupTopic = (prefix: string, groupId: string) => `${prefix}/groups/${groupId}`;
/** Every status event of a queue's jobs, for a queue token (POST /queues/{name}/subscriptions). */
export const queueTopic = (prefix: string, queue: string) => `${prefix}/queues/${queue}`;
/** A subscriber asks here for what it missed of its job (ReplayRequest); only it may publish here. */
export const replayTopic = (prefix: string, jobId: string, clientId: string) =>
  `${prefix}/replay/${jobId}/${clientId}`;
/**
 * The answers to one connection's replay requests of one job; only a connection holding that job's
 * token may subscribe to it. It names the job, not only the client: MQTT lets a connection take
 * another's client id, and a token for another job must not inherit the read-back it was answering.
 */
export const replyTopic = (prefix: string, jobId: string, clientId: string) =>
  `${prefix}/replies/${jobId}/${clientId}`;

/** A replay topic's job and client, or undefined for any other topic. */
export function parseReplayTopic(
  prefix: string,
  topic: string,
): { jobId: string; clientId: string } | undefined {
  if (!topic.startsWith(`${prefix}/replay/`)) return undefined;
  const [jobId, clientId, ...rest] = topic.slice(prefix.length + "/replay/".length).split("/");
  if (!jobId || !clientId || rest.length > 0 || !isTopicSegment(jobId) || !isTopicSegment(clientId))
    return undefined;
  return { jobId, clientId };
}

/*
 * zod's mini build: the authorizer and the browser client import this file and nothing else of
 * zod, and the mini build's schemas cost a cold start a fraction of the classic ones' (classic zod
 * is loaded anyway wherever the app's kinds are; docs/guide/performance.md "Cold start").
 */
const status = z.enum(jobStatuses);
/** A count or a sequence number: a whole number from 0. */
const count = z.int().check(z.minimum(0));
const nonEmpty = z.string().check(z.minLength(1));

/** A job's status changed; `waiting` names what a durable job waits for, `result` a small done result. */
export const StatusEvent = z.object({
  type: z.literal("status"),
  jobId: z.string(),
  status,
  at: z.number(),
  waiting: z.optional(z.record(z.string(), z.unknown())),
  result: z.optional(z.unknown()),
  error: z.optional(z.string()),
  /**
   * On an end published by the process that ran the job: each stream's last sequence number, so a
   * subscriber that has them all needs no read-back (absent: it reads back once).
   */
  streams: z.optional(z.record(z.string(), count)),
});
export const StepEvent = z.object({
  type: z.literal("step"),
  jobId: z.string(),
  step: z.string(),
  at: z.number(),
});
/** One chunk of `ctx.stream(name)`, or its close (`closed`, no chunk). `seq` counts per stream from 1. */
export const StreamEvent = z.object({
  type: z.literal("stream"),
  jobId: z.string(),
  stream: z.string(),
  seq: z.int().check(z.positive()),
  chunk: z.optional(z.unknown()),
  closed: z.optional(z.literal(true)),
  at: z.number(),
});
/** The last event a subscription yields: its job reached a terminal status. */
export const EndEvent = z.object({
  type: z.literal("end"),
  jobId: z.string(),
  status: z.enum(["done", "dead", "cancelled"]),
});
/**
 * Child `jobId`'s end recorded in its slice (a group keeps its children in slices of SLICE_SIZE, 25): that
 * slice's children by status, as the record's own write returns them, so a progress event costs no
 * read. A group of up to 25 children has one slice, whose counts are the group's; for a larger one
 * the latest counts of every slice add up to GET /groups/{id}'s.
 */
export const GroupEvent = z.object({
  type: z.literal("group"),
  groupId: z.string(),
  jobId: z.string(),
  slice: count,
  counts: z.object({ total: count, pending: count, done: count, dead: count, cancelled: count }),
  at: z.number(),
});
export const PublishedEvent = z.discriminatedUnion("type", [StatusEvent, StepEvent, StreamEvent, GroupEvent]);
export type StatusEvent = z.infer<typeof StatusEvent>;
export type GroupEvent = z.infer<typeof GroupEvent>;
export type StepEvent = z.infer<typeof StepEvent>;
export type StreamEvent = z.infer<typeof StreamEvent>;
export type EndEvent = z.infer<typeof EndEvent>;
/** What the engine publishes on a job's (or group's) topic. */
export type PublishedEvent = z.infer<typeof PublishedEvent>;
/** What `subscribe()` yields. */
export type RealtimeEvent = PublishedEvent | EndEvent;

/**
 * `from`: the stream sequence number last seen (0: from the start), `streams`: a later one per stream
 * the subscriber has seen further; `id` names the answer's end marker.
 */
export const ReplayRequest = z.object({
  id: z.string().check(z.minLength(1), z.maxLength(64)),
  from: count,
  streams: z.optional(
    z
      .record(z.string().check(z.maxLength(256)), count)
      .check(z.refine((s) => Object.keys(s).length <= 100, "at most 100 streams")),
  ),
});
export type ReplayRequest = z.infer<typeof ReplayRequest>;
/** On the reply topic: a replayed event, then `{ type: "replayed", id }` once all are sent. */
export const ReplayedMarker = z.object({ type: z.literal("replayed"), id: z.string() });
export const ReplyMessage = z.union([PublishedEvent, ReplayedMarker]);

/** A job token's readable claims: the topic prefix, the job, its group if granted, expiry (ms). */
export const JobTokenClaims = z.strictObject({
  v: z.literal(1),
  p: nonEmpty,
  j: nonEmpty,
  g: z.optional(nonEmpty),
  exp: z.int(),
});
/** A queue token's (POST /queues/{name}/subscriptions): the prefix, the queue, expiry (ms); no job. */
export const QueueTokenClaims = z.strictObject({
  v: z.literal(1),
  p: nonEmpty,
  q: nonEmpty,
  exp: z.int(),
});
export const TokenClaims = z.union([JobTokenClaims, QueueTokenClaims]);
export type JobTokenClaims = z.infer<typeof JobTokenClaims>;
export type QueueTokenClaims = z.infer<typeof QueueTokenClaims>;
export type TokenClaims = z.infer<typeof TokenClaims>;

/** `<claims as base64url JSON>.<HMAC-SHA256 as base64url>`: the claims read without the secret. */
export function readTokenClaims(token: string): TokenClaims | undefined {
  const [body, signature, ...rest] = token.split(".");
  if (!body || !signature || rest.length > 0) return undefined;
  try {
    const text = new TextDecoder().decode(
      Uint8Array.from(atob(body.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)),
    );
    const parsed = TokenClaims.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** A message's JSON, or undefined when it holds none: a subscriber and a replay both skip such a message. */
export function messageJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What `ctx.stream(name)` hands a handler. */
export interface StreamWriter {
  /** A string or a JSON value of at most MAX_STREAM_CHUNK_BYTES once serialized. */
  write(chunk: unknown): Promise<void>;
  /** The stream's end: later writes throw. */
  close(): Promise<void>;
}
