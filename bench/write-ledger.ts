import { marshall } from "@aws-sdk/util-dynamodb";
import { statusIndex } from "../lib/store/table.ts";
import { DYNAMODB_WRITE_OPERATIONS, dynamodbBills, isConditionalFailure } from "./request-meter.ts";

/*
 * DynamoDB writes by the item they land on (a job, a group's slice, the group…), so a scenario can say
 * where its writes go, and the status-index writes dynalite never bills, estimated by following each
 * item in and out of the index.
 * Sees requests as the request meter does: one deserialize-step middleware, marshalled input/output.
 */

type AttributeValue = {
  S?: string;
  N?: string;
  B?: Uint8Array;
  BOOL?: boolean;
  NULL?: boolean;
  SS?: string[];
  NS?: string[];
  BS?: Uint8Array[];
  L?: AttributeValue[];
  M?: Record<string, AttributeValue>;
};
type Item = Record<string, AttributeValue>;

interface WriteInput {
  Key?: Item;
  Item?: Item;
}

export interface ClassStats {
  /** Write requests DynamoDB bills, retries included: those that succeeded or lost their condition. */
  requests: number;
  /** Of those, the lost conditions. */
  errors: number;
  /** Writes that failed otherwise (throttled, a server error, no answer): billed nothing, counted apart. */
  unbilled: number;
  /** ConsumedCapacity write units, plus 1 for each write that reported none (a lost condition, say). */
  writeUnits: number;
  /** Estimated status-index write units (IndexEntries): dynalite bills none, DynamoDB bills them too. */
  indexWriteUnits: number;
}

export type LedgerSnapshot = Record<string, ClassStats>;

/** The default classes, by key: job, payload, slice, group, or the kind of the shared item. */
export function itemClassOf(pk: string, sk: string): string {
  if (sk === "job") return "job";
  if (sk === "payload") return "payload";
  if (sk === "group") return "group";
  if (sk.startsWith("slice#")) return "slice";
  const prefix = pk.split("#")[0] ?? pk;
  return prefix === "" ? "other" : prefix;
}

/** DynamoDB's size of one attribute value, near enough for 1 KB write units (numbers ~ digits / 2 + 1). */
function valueBytes(v: AttributeValue): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S);
  if (v.N !== undefined) return Math.ceil(v.N.replace(/^-|\.|e.*$/gi, "").length / 2) + 1;
  if (v.B !== undefined) return v.B.byteLength;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS) return v.SS.reduce((n, s) => n + Buffer.byteLength(s), 0);
  if (v.NS) return v.NS.reduce((n, s) => n + valueBytes({ N: s }), 0);
  if (v.BS) return v.BS.reduce((n, b) => n + b.byteLength, 0);
  if (v.L) return 3 + v.L.reduce((n, e) => n + 1 + valueBytes(e), 0);
  if (v.M) return 3 + itemBytes(v.M);
  return 0;
}

export function itemBytes(item: Item): number {
  return Object.entries(item).reduce((n, [name, v]) => n + Buffer.byteLength(name) + valueBytes(v), 0);
}

/** An index entry is the projected item (ALL) plus ~100 bytes of index overhead; 1 WCU per started KB. */
export const indexEntryUnits = (item: Item) => Math.ceil((itemBytes(item) + 100) / 1024);

/**
 * The status-index entries of the items written so far, to price each write's index writes as
 * DynamoDB bills them (the index projects ALL): an item entering the index writes its entry, one
 * leaving it deletes it, one staying rewrites it, and one whose index key changed deletes the old
 * entry and writes the new (2 writes). Sees every write of one client from its start; an item it
 * never saw written is taken to be outside the index.
 */
export class IndexEntries {
  private entries = new Map<string, { key: string; units: number }>();

  /** Index write units of one successful write of `itemKey`; `after` is the item after it (undefined: deleted). */
  afterWrite(itemKey: string, after: Item | undefined): number {
    const before = this.entries.get(itemKey);
    const hash = after?.[statusIndex.hashKey]?.S;
    const now =
      after && hash !== undefined
        ? { key: `${hash}\u0000${after[statusIndex.rangeKey]?.S ?? ""}`, units: indexEntryUnits(after) }
        : undefined;
    if (now) this.entries.set(itemKey, now);
    else this.entries.delete(itemKey);
    if (!before) return now?.units ?? 0;
    if (!now) return before.units;
    return before.key === now.key ? now.units : before.units + now.units;
  }
}

/**
 * An item in DynamoDB's attribute-value form. The document client's input reaches this step
 * marshalled, but its output comes back already unmarshalled.
 */
function asItem(attributes: Record<string, unknown> | undefined): Item | undefined {
  if (!attributes) return undefined;
  const pk = attributes.pk as { S?: unknown } | string | undefined;
  if (typeof pk === "object" && typeof pk?.S === "string") return attributes as Item;
  return marshall(attributes, { removeUndefinedValues: true }) as Item;
}

export const emptyClassStats = (): ClassStats => ({
  requests: 0,
  errors: 0,
  unbilled: 0,
  writeUnits: 0,
  indexWriteUnits: 0,
});

export class WriteLedger {
  private classes = new Map<string, ClassStats>();
  private index = new IndexEntries();
  /** A scenario's own classes (e.g. "completion job"); undefined falls back to itemClassOf. */
  tag: ((pk: string, sk: string) => string | undefined) | undefined;

  attach(client: { middlewareStack: object }): void {
    type Next = (args: { input: object }) => Promise<{ output: object }>;
    const stack = client.middlewareStack as {
      add(
        mw: (next: Next, context: { commandName?: string }) => Next,
        options: { step: "deserialize"; priority: "high"; name: string; override: boolean },
      ): void;
    };
    stack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? "").replace(/Command$/, "");
        if (!DYNAMODB_WRITE_OPERATIONS.has(operation)) return next(args);
        try {
          const out = await next(args);
          this.record(operation, args.input as WriteInput, out.output, undefined);
          return out;
        } catch (err) {
          this.record(operation, args.input as WriteInput, {}, err);
          throw err;
        }
      },
      { step: "deserialize", priority: "high", name: "writeLedger", override: true },
    );
  }

  /** A new window: forgets the counts, not which items are in the index. */
  reset(): void {
    this.classes.clear();
  }

  snapshot(): LedgerSnapshot {
    return Object.fromEntries([...this.classes].map(([k, s]) => [k, { ...s }]));
  }

  private record(operation: string, input: WriteInput, output: object, err: unknown): void {
    const key = input.Key ?? input.Item ?? {};
    const pk = key.pk?.S ?? "";
    const sk = key.sk?.S ?? "";
    const name = pk === "" ? `other (${operation})` : (this.tag?.(pk, sk) ?? itemClassOf(pk, sk));
    let s = this.classes.get(name);
    if (!s) {
      s = emptyClassStats();
      this.classes.set(name, s);
    }
    if (!dynamodbBills(err)) {
      s.unbilled += 1;
      return;
    }
    s.requests += 1;
    if (isConditionalFailure(err)) {
      // As the request meter: AWS charges a lost condition (≥ 1 WCU) but reports no capacity.
      s.errors += 1;
      s.writeUnits += 1;
      return;
    }
    const out = output as {
      ConsumedCapacity?: { CapacityUnits?: number };
      Attributes?: Record<string, unknown>;
    };
    s.writeUnits += out.ConsumedCapacity?.CapacityUnits ?? 1;
    // The item after the write: a put's own, an update's ALL_NEW (the store always asks for it).
    const after =
      operation === "PutItem" ? input.Item : operation === "UpdateItem" ? asItem(out.Attributes) : undefined;
    if (operation === "DeleteItem" || after)
      s.indexWriteUnits += this.index.afterWrite(`${pk}\u0000${sk}`, after);
  }
}

/** Sums the classes that match. */
export function sumClasses(snapshot: LedgerSnapshot, match: (name: string) => boolean): ClassStats {
  const total = emptyClassStats();
  for (const [name, s] of Object.entries(snapshot)) {
    if (!match(name)) continue;
    for (const k of Object.keys(total) as (keyof ClassStats)[]) total[k] += s[k];
  }
  return total;
}
