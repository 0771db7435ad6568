/**
 * Where the store writes a key that comes from a payload or a request (docs/architecture.md §3), and
 * the one check each such key gets before anything is written: `storedKeyProblem`. It sits in the
 * model layer beside the enqueue check that uses it (the producer and the client share that check),
 * and lib/store/keys.ts builds these items' keys with these same functions, so the check measures
 * the very text DynamoDB is given.
 */
import { encodeFlowKey, type FlowKey, flowKey } from "./flow-key.ts";

/** DynamoDB's key-size limits, in UTF-8 bytes: a partition key's and a sort key's (an index's too). */
export const MAX_PARTITION_KEY_BYTES = 2048;
export const MAX_SORT_KEY_BYTES = 1024;

/** Index sort key: time first so a shard reads in due/finish order. */
export const indexSort = (at: number, id: string) => `${String(at).padStart(15, "0")}#${id}`;

/** A batch kind's key (§18): the partition of its backlog count and its call permits. */
export const batchKeyPartition = (kind: string, key: string) => `bkey#${kind}#${key}`;
/** A debounced or singleton kind's key (§19): the partition of its lock. */
export const coalesceLockPartition = (kind: string, key: string) => `coal#${kind}#${key}`;
/** A flow key (§20): the partition of its state (places, cool-down), `fkey#` and its text. */
export const flowKeyPartition = (fk: FlowKey) => `fkey#${encodeFlowKey(fk)}`;
/**
 * A flow key's parked jobs sit in the status index sorted by kind, key, then arrival aged by priority
 * (lib/job/priority.ts agedArrival: a time, before or after the enqueue's, in indexSort's fixed 15
 * digits so the text's order is the time's): its text with the key URI-encoded, so no key's entries
 * run into another's (a key may hold `#`).
 */
export const parkPrefix = (fk: FlowKey) =>
  `${encodeFlowKey(flowKey(fk.kind, encodeURIComponent(fk.key), fk.limit))}#`;
export const parkSort = (fk: FlowKey, agedArrival: number, id: string) =>
  `${parkPrefix(fk)}${indexSort(agedArrival, id)}`;
/** The jobs waiting for an event (§22): one partition per name and match value, both URI-encoded. */
export const eventWaitersPartition = (event: string, match: string) =>
  `evt#${encodeURIComponent(event)}#${encodeURIComponent(match)}`;
/** The events kept for a lookback (§22): one partition per name and match, as long as its waiters'. */
export const bufferedEventsPartition = (event: string, match: string) =>
  `evb#${encodeURIComponent(event)}#${encodeURIComponent(match)}`;

/** One key attribute the store writes: its text, which of DynamoDB's limits holds it, its layout. */
export interface WrittenKey {
  text: string;
  role: "partition" | "sort";
  /** The layout as people read it, for the refusal's message. */
  layout: string;
}

/** A job's id at its longest in a written key: a ULID's 26 characters. */
const LONGEST_ID = "0".repeat(26);
/** The latest time indexSort writes in its 15 digits (every time has as many). */
const LATEST_TIME = 999_999_999_999_999;

/** The kinds of key a kind computes from a payload at enqueue. */
export type ComputedKey = "batch" | "debounce" | "singleton" | "flow";

/**
 * Every key attribute the store writes with a kind's computed key in it, each at its longest. A flow
 * key of a limit other than the kind's first (`limit`, its name) is written with the name in it.
 */
export function computedKeyWrites(
  type: ComputedKey,
  kind: string,
  key: string,
  limit?: string,
): WrittenKey[] {
  switch (type) {
    case "batch":
      // The permits' sort keys (`slot#<n>`) hold no part of the key.
      return [{ text: batchKeyPartition(kind, key), role: "partition", layout: "bkey#<kind>#<key>" }];
    case "debounce":
    case "singleton":
      return [{ text: coalesceLockPartition(kind, key), role: "partition", layout: "coal#<kind>#<key>" }];
    case "flow":
      return [
        { text: flowKeyPartition(flowKey(kind, key, limit)), role: "partition", layout: "fkey#<kind>#<key>" },
        {
          text: parkSort(flowKey(kind, key, limit), LATEST_TIME, LONGEST_ID),
          role: "sort",
          layout: "<kind>#<key, URI-encoded>#<time>#<job id>, a parked job's index sort key",
        },
      ];
  }
}

/** The key attribute an event wait is written under: its waiters' partition. */
export const eventWaiterWrites = (event: string, match: string): WrittenKey[] => [
  {
    text: eventWaitersPartition(event, match),
    role: "partition",
    layout: "evt#<name, URI-encoded>#<match, URI-encoded>",
  },
];

/** UTF-8 as DynamoDB counts it; a web API, so the model's key checks type-check for the console too. */
const utf8 = new TextEncoder();

/** Why a lone surrogate is refused, wherever a stored string is checked. */
export const LONE_SURROGATE =
  "contains a lone surrogate (half of a UTF-16 pair), which can't be stored; send whole characters";

/**
 * The one check every key taken from a payload or a request gets before the store writes it: why it
 * can't be stored, or undefined. First each value must be well-formed UTF-16: DynamoDB keeps UTF-8,
 * which has no form for a lone surrogate (the SDK writes U+FFFD instead, so two keys would become
 * one), and encodeURIComponent throws on one. Then every key attribute `writes` builds from the
 * values must fit DynamoDB's limit for its role, counted in UTF-8 bytes as written: the emulators
 * don't enforce those limits, DynamoDB refuses the write (a 500 or a delivery that fails for ever).
 */
export function storedKeyProblem<const V extends readonly string[]>(
  values: V,
  writes: (...values: V) => readonly WrittenKey[],
): string | undefined {
  if (!values.every((v) => v.isWellFormed())) return LONE_SURROGATE;
  for (const written of writes(...values)) {
    const bytes = utf8.encode(written.text).byteLength;
    const max = written.role === "partition" ? MAX_PARTITION_KEY_BYTES : MAX_SORT_KEY_BYTES;
    if (bytes > max)
      return `takes ${bytes} bytes where the table writes it (${written.layout}), over DynamoDB's ${max}-byte ${written.role} key limit`;
  }
  return undefined;
}
