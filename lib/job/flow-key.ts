/**
 * A flow key (docs/architecture.md §20): what one of a flow-controlled job's limits is kept under, its
 * kind, the limit and the key its payload gives (`key(payload)`, lib/job/flow.ts). One value, one
 * text: `encodeFlowKey` writes it `<kind>#<key>` for the kind's first limit (the layout a lone limit
 * always had, so its stored state and lines read on) and `<kind>!<limit>#<key>` for the others;
 * `decodeFlowKey` reads that back (a kind's name and a limit's have no `#` and no `!`, so the first
 * `#` ends them; `!` sorts before `#` and every character of a kind's name, so all the lines of a kind
 * sit together in the parked index, before any other kind's whose name starts with its own).
 * Every other form a flow key takes is built here from the value:
 *
 * - the table: its state item's partition `fkey#<text>` and its parked line's shard, the hash of the
 *   text (lib/job/key-layout.ts, lib/store/keys.ts); its rate bucket `rate#flow:<text>`
 *   (`flowRateBucket`); its parked line's sort keys, the text with the key URI-encoded (`parkPrefix`);
 * - a job's item and message, and the log: the attributes `kind` and `flowKey` (`flowKeyOf`,
 *   `flowKeyFields`);
 * - SQS: the message's fair-queue group, the text (lib/transport/outgoing-messages.ts);
 * - the API: `/keys/{kind}/{key}` (`flowKeyPath`).
 */
import { InvariantError } from "../errors.ts";

export interface FlowKey {
  readonly kind: string;
  readonly key: string;
  /** The limit's name, for any limit but the kind's first (absent: the first, or a lone limit). */
  readonly limit?: string;
}

export const flowKey = (kind: string, key: string, limit?: string): FlowKey =>
  limit === undefined ? { kind, key } : { kind, key, limit };

/** The part of a flow key's text before its key: `<kind>`, or `<kind>!<limit>`. */
const lineOwner = ({ kind, limit }: FlowKey) => (limit === undefined ? kind : `${kind}!${limit}`);

/** The one text of a flow key: `<kind>#<key>`, or `<kind>!<limit>#<key>`. */
export const encodeFlowKey = (fk: FlowKey): string => `${lineOwner(fk)}#${fk.key}`;

/** A flow key from its text (`encodeFlowKey`'s); a text without a kind is refused. */
export function decodeFlowKey(text: string): FlowKey {
  const end = text.indexOf("#");
  if (end < 1) throw new InvariantError(`"${text.slice(0, 80)}" is not a flow key's text (<kind>#<key>)`);
  const [kind = "", limit] = text.slice(0, end).split("!");
  return flowKey(kind, text.slice(end + 1), limit);
}

/**
 * The attributes a job's item and message hold its flow keys in: `flowKey`, its first limit's key
 * (a lone limit's, as always stored), and `flowKeys`, the other limits' keys by limit name.
 */
export interface JobFlowKeys {
  kind: string;
  flowKey?: string | undefined;
  flowKeys?: Record<string, string> | undefined;
}

/** A job's flow key for its kind's first limit; undefined for a job that has none. */
export function flowKeyOf(job: JobFlowKeys): FlowKey | undefined {
  return job.flowKey === undefined ? undefined : { kind: job.kind, key: job.flowKey };
}

/**
 * A job's flow key for one of its kind's limits (lib/job/flow.ts FlowLimit): the first limit's from
 * `flowKey`, any other's from `flowKeys`. undefined when the job has none for it (a job enqueued
 * before the kind declared that limit: the limit doesn't hold it).
 */
export function limitKeyOf(job: JobFlowKeys, limit: { index: number; name: string }): FlowKey | undefined {
  if (limit.index === 0) return flowKeyOf(job);
  const key = job.flowKeys?.[limit.name];
  return key === undefined ? undefined : flowKey(job.kind, key, limit.name);
}

/** A job's key for the limit a flow key is of (`fk.limit`): the text it would hold there. */
export const jobKeyFor = (job: JobFlowKeys, fk: FlowKey): string | undefined =>
  fk.limit === undefined ? job.flowKey : job.flowKeys?.[fk.limit];

/**
 * The line a parked job waits in: its first limit's, or `parkedIn`'s (the limit that refused it).
 */
export function parkedLineOf(job: JobFlowKeys & { parkedIn?: string | undefined }): FlowKey | undefined {
  if (job.parkedIn === undefined) return flowKeyOf(job);
  const key = job.flowKeys?.[job.parkedIn];
  return key === undefined ? undefined : flowKey(job.kind, key, job.parkedIn);
}

/** A flow key as a log line holds it: its kind, the key as `flowKey`, and its limit's name. */
export const flowKeyFields = ({ kind, key, limit }: FlowKey) => ({
  kind,
  flowKey: key,
  ...(limit !== undefined ? { flowLimit: limit } : {}),
});

/**
 * The bucket a flow key's rate is kept in (lib/store/rate-limit-ops.ts): a scope no declared one can
 * be (scope names have no ':'); stored as `rate#flow:<text>`.
 */
export const flowRateBucket = (fk: FlowKey) => ({ scope: `flow:${lineOwner(fk)}`, key: fk.key });

/**
 * A flow key's API path, `/keys/{kind}/{key}` (with `?limit=<name>` for a limit other than the kind's
 * first); `segment` makes each part one path segment.
 */
export const flowKeyPath = (
  { kind, key, limit }: FlowKey,
  segment: (part: string) => string = encodeURIComponent,
) =>
  `/keys/${segment(kind)}/${segment(key)}${limit === undefined ? "" : `?limit=${encodeURIComponent(limit)}`}`;
