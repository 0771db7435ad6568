/**
 * A flow key (docs/architecture.md §20): what a flow-controlled job's limits are kept under, its kind
 * and the key its payload gives (`flow.key(payload)`, lib/job/flow.ts). One value, one text:
 * `encodeFlowKey` writes it `<kind>#<key>` and `decodeFlowKey` reads that back (a kind's name has no
 * `#`, so the first one ends it). Every other form a flow key takes is built here from the value:
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
}

export const flowKey = (kind: string, key: string): FlowKey => ({ kind, key });

/** The one text of a flow key: `<kind>#<key>`. */
export const encodeFlowKey = ({ kind, key }: FlowKey): string => `${kind}#${key}`;

/** A flow key from its text (`encodeFlowKey`'s); a text without a kind is refused. */
export function decodeFlowKey(text: string): FlowKey {
  const end = text.indexOf("#");
  if (end < 1) throw new InvariantError(`"${text.slice(0, 80)}" is not a flow key's text (<kind>#<key>)`);
  return { kind: text.slice(0, end), key: text.slice(end + 1) };
}

/** A job's flow key from its item's or message's attributes; undefined for a job that has none. */
export function flowKeyOf(job: { kind: string; flowKey?: string | undefined }): FlowKey | undefined {
  return job.flowKey === undefined ? undefined : { kind: job.kind, key: job.flowKey };
}

/** A flow key as a job's item, its message and a log line hold it: its kind, and the key as `flowKey`. */
export const flowKeyFields = ({ kind, key }: FlowKey) => ({ kind, flowKey: key });

/**
 * The bucket a flow key's rate is kept in (lib/store/rate-limit-ops.ts): a scope no declared one can
 * be (scope names have no ':'); stored as `rate#flow:<text>`.
 */
export const flowRateBucket = ({ kind, key }: FlowKey) => ({ scope: `flow:${kind}`, key });

/** A flow key's API path, `/keys/{kind}/{key}`; `segment` makes each part one path segment. */
export const flowKeyPath = ({ kind, key }: FlowKey, segment: (part: string) => string = encodeURIComponent) =>
  `/keys/${segment(kind)}/${segment(key)}`;
