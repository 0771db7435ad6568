import { partitionPattern } from "../lib/store/keys.ts";
import { statusIndex, tableKeys } from "../lib/store/table.ts";
import type { DeserializeArgs, MeterableClient } from "./request-meter.ts";

/**
 * The scale model's meter (docs/guide/scale.md): DynamoDB capacity per partition key, the status index's
 * partitions included, because AWS caps each partition key at about 1 000 write and 3 000 read
 * units a second however much the table as a whole may take.
 *
 * Units come from the ConsumedCapacity each store request already asks for (item size, 1 KB a write
 * unit, 4 KB a read unit). A failed conditional write reports none and costs 1 unit. Index writes
 * are not reported per index by the emulators, so the meter keeps its own picture of which item sits
 * in which index partition (from the writes it saw) and charges an index write, as large as the
 * table write (the index projects every attribute), to the partition an item enters, leaves or is
 * updated in.
 */

export interface KeyHeat {
  pattern: string;
  /** The partition key's value (an index partition's is the gsi1pk). */
  key: string;
  onIndex: boolean;
  writeUnits: number;
  readUnits: number;
}

type Attribute = { S?: string } | string | undefined;
type Item = Record<string, Attribute>;
interface Capacity {
  CapacityUnits?: number;
}
interface Input {
  TableName?: string;
  Key?: Item;
  Item?: Item;
  IndexName?: string;
  KeyConditionExpression?: string;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, Attribute>;
  RequestItems?: Record<string, { Keys?: Item[] }>;
}

/** An attribute's string, marshalled ({ S }) or not (the document client's input before marshalling). */
const text = (a: Attribute): string | undefined => (typeof a === "string" ? a : a?.S);

/** The placeholder an expression uses for an attribute name, if it names it at all. */
function placeholderOf(input: Input, attribute: string): string | undefined {
  return Object.entries(input.ExpressionAttributeNames ?? {}).find(([, name]) => name === attribute)?.[0];
}

/** Splits "SET a = :x, b = :y REMOVE c" into its clauses by keyword. */
function clauses(expression: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /\b(SET|REMOVE|ADD|DELETE)\b/g;
  const marks = [...expression.matchAll(re)];
  marks.forEach((m, i) => {
    const end = marks[i + 1]?.index ?? expression.length;
    out.set(m[1] as string, expression.slice((m.index ?? 0) + m[0].length, end));
  });
  return out;
}

/** What an UpdateItem does to the index key: sets it to a value, removes it, or leaves it. */
function indexChange(input: Input): { set: string } | "remove" | "keep" {
  const name = placeholderOf(input, statusIndex.hashKey);
  if (!name || !input.UpdateExpression) return "keep";
  const parts = clauses(input.UpdateExpression);
  const assigned = parts.get("SET")?.match(new RegExp(`${name}\\s*=\\s*(:\\w+)`));
  const value = assigned ? text(input.ExpressionAttributeValues?.[assigned[1] as string]) : undefined;
  if (value !== undefined) return { set: value };
  const removed = parts.get("REMOVE")?.split(",") ?? [];
  if (removed.some((a) => a.trim() === name)) return "remove";
  return "keep";
}

/** The partition a Query reads: the value its key condition gives the (index's) hash key. */
function queriedPartition(input: Input): string | undefined {
  const attribute = input.IndexName ? statusIndex.hashKey : tableKeys.hashKey;
  const name = placeholderOf(input, attribute) ?? attribute;
  const match = input.KeyConditionExpression?.match(new RegExp(`${name}\\s*=\\s*(:\\w+)`));
  return match ? text(input.ExpressionAttributeValues?.[match[1] as string]) : undefined;
}

const unitsOf = (c: Capacity | Capacity[] | undefined): number | undefined =>
  c === undefined ? undefined : (Array.isArray(c) ? c : [c]).reduce((n, x) => n + (x.CapacityUnits ?? 0), 0);

const itemId = (key: Item) => `${text(key[tableKeys.hashKey])}\u0000${text(key[tableKeys.rangeKey])}`;

export class HeatMeter {
  private readonly heat = new Map<string, KeyHeat>();
  /** Item → the index partition it sits in, as the writes seen so far left it. Kept across resets. */
  private readonly indexed = new Map<string, string>();

  /** Joins a DynamoDB client's middleware stack (beside the RequestMeter, under its own name). */
  attach(client: { middlewareStack: object }): void {
    (client as MeterableClient).middlewareStack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? "").replace(/Command$/, "");
        try {
          const out = await next(args);
          const consumed = (out.output as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
          this.record(operation, args, unitsOf(consumed), true);
          return out;
        } catch (err) {
          if ((err as { name?: string }).name === "ConditionalCheckFailedException")
            this.record(operation, args, 1, false);
          throw err;
        }
      },
      { step: "deserialize", priority: "high", name: "heatMeter", tags: ["HEAT_METER"], override: true },
    );
  }

  /** Starts a new window of counts; the picture of the index stays (the items are still there). */
  reset(): void {
    this.heat.clear();
  }

  snapshot(): KeyHeat[] {
    return [...this.heat.values()].map((h) => ({ ...h }));
  }

  private add(
    partition: string | undefined,
    onIndex: boolean,
    write: number,
    read: number,
    pattern?: string,
  ): void {
    if (partition === undefined) return;
    const id = `${onIndex ? "index" : "table"}\u0000${partition}`;
    let h = this.heat.get(id);
    if (!h) {
      h = {
        pattern: pattern ?? partitionPattern(partition, onIndex),
        key: partition,
        onIndex,
        writeUnits: 0,
        readUnits: 0,
      };
      this.heat.set(id, h);
    }
    h.writeUnits += write;
    h.readUnits += read;
  }

  private record(operation: string, args: DeserializeArgs, units: number | undefined, ok: boolean): void {
    const input = args.input as Input;
    const partitionOf = (item: Item | undefined) => (item ? text(item[tableKeys.hashKey]) : undefined);
    switch (operation) {
      case "GetItem":
        this.add(partitionOf(input.Key), false, 0, units ?? 0.5);
        return;
      case "Query":
        this.add(queriedPartition(input), input.IndexName !== undefined, 0, units ?? 0.5);
        return;
      case "Scan":
        // Every partition a little: charged to one pseudo-key so it shows, not to any real one.
        this.add("(whole table)", false, 0, units ?? 0.5, "table scan");
        return;
      case "BatchGetItem": {
        const keys = Object.values(input.RequestItems ?? {}).flatMap((r) => r.Keys ?? []);
        for (const key of keys)
          this.add(partitionOf(key), false, 0, (units ?? 0.5 * keys.length) / keys.length);
        return;
      }
      case "PutItem":
      case "UpdateItem":
      case "DeleteItem":
        this.recordWrite(operation, input, units ?? 1, ok);
    }
  }

  private recordWrite(operation: string, input: Input, units: number, ok: boolean): void {
    const key = input.Key ?? input.Item;
    if (!key) return;
    this.add(text(key[tableKeys.hashKey]), false, units, 0);
    if (!ok) return;
    const id = itemId(key);
    const before = this.indexed.get(id);
    let after: string | undefined;
    if (operation === "PutItem") after = text(input.Item?.[statusIndex.hashKey]);
    else if (operation === "UpdateItem") {
      const change = indexChange(input);
      after = change === "keep" ? before : change === "remove" ? undefined : change.set;
    }
    if (before !== undefined) this.add(before, true, units, 0);
    if (after !== undefined && after !== before) this.add(after, true, units, 0);
    if (after === undefined) this.indexed.delete(id);
    else this.indexed.set(id, after);
  }
}
