import type { ErrorCode } from "../../../lib/errors.ts";
import { invalid } from "./answers.ts";

/**
 * One row of the bad-input suite (test/e2e/bad-input.test.ts): a request a client could send, and
 * what the service must answer. Every row is also held to the suite's invariants: no status ≥ 500,
 * the documented error shape with a code from `errorCodes`, an answer within 2 s.
 */
export type BadRequest =
  /** `json` is sent as JSON.stringify(json); `raw` as the exact body text. */
  | { method: string; path: string; json?: unknown; raw?: string }
  /** The Lambda Invoke API, through the real @aws-sdk/client-lambda or a raw fetch; `payload` is the JSON text. */
  | { invoke: "sdk" | "fetch"; payload: string };

export interface BadExpect {
  /** The HTTP status (Invoke rows always answer 200 without a function error). */
  status?: number | readonly number[];
  /** The error's code: of the HTTP answer, or of the Invoke answer's `{ error }`. */
  code?: ErrorCode;
  /** A batch's results in order: each item's error code, or "ok" when it has an id. */
  items?: readonly (ErrorCode | "ok")[];
  /** The JobView answered carries this payload (checks a value survived the round trip). */
  payloadBack?: unknown;
}

/** Values the suite creates once, before the rows run. */
export interface Fixtures {
  /** A job that ran to done. */
  doneId: string;
  /** A job with a uniqueKey, delayed far enough to stay live for the whole suite. */
  liveUniqueKey: string;
  liveId: string;
  /** The same, with emoji and a non-BMP character in its key. */
  liveEmojiKey: string;
  /** Cursors the API really handed out, for the scan and the index paths. */
  scanCursor: string;
  indexCursor: string;
}

export interface BadCase {
  name: string;
  request: BadRequest | ((f: Fixtures) => BadRequest);
  expect: BadExpect;
}

/** A row in one line: its name, the request, and what the service must answer. */
export const badCase = (name: string, request: BadCase["request"], expect: BadExpect): BadCase => ({
  name,
  request,
  expect,
});

/**
 * Bodies no JSON route takes, each refused as a validation error: none at all, and JSON that is not
 * an object (null, an array, a string) or an empty one.
 */
export const unusableBodies = (path: string): BadCase[] => {
  const raw = (body: string) => ({ method: "POST", path, raw: body });
  return [
    badCase(`POST ${path} without a body`, { method: "POST", path }, invalid),
    badCase(`POST ${path} body null`, raw("null"), invalid),
    badCase(`POST ${path} body []`, raw("[]"), invalid),
    badCase(`POST ${path} body a string`, raw('"echo"'), invalid),
    badCase(`POST ${path} body {}`, { method: "POST", path, json: {} }, invalid),
  ];
};

/** Strings that have broken text handling somewhere: every string field gets each of them. */
export const oddStrings = {
  emoji: "🚀 job ✨",
  "U+FFFE": "a\uFFFEb",
  "U+FFFF": "a\uFFFFb",
  "lone high surrogate": "a\uD800b",
  "lone low surrogate": "a\uDC00b",
  empty: "",
  NUL: "a\u0000b",
  /** 100 000 chars in a body; in a URL 3 000, past DynamoDB's 2 048-byte key limit yet under Node's header limit. */
  huge: "x".repeat(100_000),
} as const;
export type OddString = keyof typeof oddStrings;
export const oddNames = Object.keys(oddStrings) as OddString[];

/** The same odd strings as URL bytes: a lone surrogate has no UTF-8 form, so it goes as its WTF-8 bytes. */
export const oddUrlParts: Record<OddString, string> = {
  emoji: encodeURIComponent(oddStrings.emoji),
  "U+FFFE": "a%EF%BF%BEb",
  "U+FFFF": "a%EF%BF%BFb",
  "lone high surrogate": "a%ED%A0%80b",
  "lone low surrogate": "a%ED%B0%80b",
  empty: "",
  NUL: "a%00b",
  huge: "x".repeat(3_000),
};

/** JSON text nested `depth` levels deep, built as text so that no client-side recursion is involved. */
export const nestedArrays = (depth: number, leaf = "1") => `${"[".repeat(depth)}${leaf}${"]".repeat(depth)}`;
export const nestedObjects = (depth: number, leaf = "1") =>
  `${'{"a":'.repeat(depth)}${leaf}${"}".repeat(depth)}`;

/** A cursor as the API encodes one: base64url of its JSON. */
export const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
export const cursorOfText = (text: string) => Buffer.from(text).toString("base64url");
