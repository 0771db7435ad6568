import { performance } from "node:perf_hooks";
import { keptDays } from "../lib/claims/claim-keys.ts";
import { sqsBilledRequests } from "./cost-estimate.ts";

/*
 * The slice of the SDK v3 (smithy) middleware types the meter uses, spelled out so it depends on no
 * transitive package. Every AWS SDK v3 client's middlewareStack accepts this shape.
 */
export interface DeserializeArgs {
  input: object;
  request: unknown;
}
export interface DeserializeOutput {
  output: object;
  response: unknown;
}
export type Handler = (args: DeserializeArgs) => Promise<DeserializeOutput>;
export interface MeterableClient {
  middlewareStack: {
    add(
      middleware: (next: Handler, context: { commandName?: string }) => Handler,
      options: { step: "deserialize"; priority: "high"; name: string; tags?: string[]; override?: boolean },
    ): void;
  };
}

/** Per service + operation totals over the metered window. */
export interface OperationStats {
  /**
   * HTTP requests sent that AWS bills, SDK retries included: every one, but for DynamoDB only those
   * that succeeded or lost their condition (the others are in `unbilled`).
   */
  requests: number;
  /** Requests answered with an error (also counted in `requests`). */
  errors: number;
  /**
   * DynamoDB requests that failed other than on their condition (throttled, a server error, no
   * answer): DynamoDB bills no capacity for them, so they are in neither `requests` nor `errors`.
   * An SDK retry of one is counted as any request. An emulator under load fails some.
   */
  unbilled: number;
  /** Of those errors, DynamoDB ConditionalCheckFailedException: AWS still charges write units for them. */
  conditionalFailures: number;
  /** Requests counted the way SQS bills them: one per started 64 KB of request or response body. */
  billedRequests: number;
  /** Sum of ConsumedCapacity read units (ReadCapacityUnits, or CapacityUnits of a read operation). */
  readUnits: number;
  /** Sum of ConsumedCapacity write units (WriteCapacityUnits, or CapacityUnits of a write operation). */
  writeUnits: number;
  /** DynamoDB data-plane requests that cost capacity but reported none (see assumed*Units). */
  unmetered: number;
  /**
   * The least AWS would charge for the unmetered requests: a failed conditional write or a write
   * without ReturnConsumedCapacity 1 WCU; a read without it 1 RCU strongly consistent, 0.5
   * eventually consistent (items ≤ 4 KB).
   */
  assumedReadUnits: number;
  assumedWriteUnits: number;
  /** SQS ReceiveMessage only: responses that returned at least one message. */
  nonEmptyReceives: number;
  /** SQS ReceiveMessage: messages returned; Delete/SendMessage(Batch): entries to delete or sent. */
  messages: number;
  /** S3 PutObject into a claim prefix: bytes written × the days its lifecycle class keeps them. */
  storedByteDays: number;
}

export interface MeterSnapshot {
  /** Keyed `${service}:${Operation}`, e.g. "dynamodb:UpdateItem", "sqs:ReceiveMessage". */
  operations: Record<string, OperationStats>;
  /**
   * One entry per SQS batch that was received and then deleted: milliseconds from the
   * ReceiveMessage response to the DeleteMessageBatch request carrying its receipt handles. With
   * the local event-source poller in between, that is the worker handler's wall time per invocation.
   */
  batchDurationsMs: number[];
  /** Milliseconds the window has been open (since construction or the last reset). */
  elapsedMs: number;
}

export const DYNAMODB_WRITE_OPERATIONS: ReadonlySet<string> = new Set([
  "PutItem",
  "UpdateItem",
  "DeleteItem",
  "BatchWriteItem",
  "TransactWriteItems",
  "ExecuteStatement",
  "BatchExecuteStatement",
  "ExecuteTransaction",
]);
export const DYNAMODB_READ_OPERATIONS: ReadonlySet<string> = new Set([
  "GetItem",
  "BatchGetItem",
  "Query",
  "Scan",
  "TransactGetItems",
]);

interface Capacity {
  CapacityUnits?: number;
  ReadCapacityUnits?: number;
  WriteCapacityUnits?: number;
}

const emptyStats = (): OperationStats => ({
  requests: 0,
  errors: 0,
  unbilled: 0,
  conditionalFailures: 0,
  billedRequests: 0,
  readUnits: 0,
  writeUnits: 0,
  unmetered: 0,
  assumedReadUnits: 0,
  assumedWriteUnits: 0,
  nonEmptyReceives: 0,
  messages: 0,
  storedByteDays: 0,
});

/** DynamoDB's lost condition: it still charges the write (≥ 1 WCU), but reports no capacity. */
export function isConditionalFailure(err: unknown): boolean {
  return (err as { name?: string } | undefined)?.name === "ConditionalCheckFailedException";
}

/**
 * Whether DynamoDB bills a request that ended so: a success, or a lost condition. A throttled
 * request, a server error or one that got no answer consumes no capacity, and DynamoDB on demand
 * bills the capacity consumed.
 */
export function dynamodbBills(err: unknown): boolean {
  return err === undefined || isConditionalFailure(err);
}

function contentLength(message: unknown): number {
  const m = message as { headers?: Record<string, string | undefined>; body?: unknown } | undefined;
  const header = m?.headers?.["content-length"] ?? m?.headers?.["Content-Length"];
  if (header !== undefined && Number.isFinite(Number(header))) return Number(header);
  if (typeof m?.body === "string") return Buffer.byteLength(m.body);
  if (m?.body instanceof Uint8Array) return m.body.byteLength;
  return 0;
}

/**
 * Counts AWS SDK requests per service and operation, and sums DynamoDB ConsumedCapacity, with one
 * middleware in the deserialize step (inside the retry loop, so every attempt counts, and outside
 * the deserializer, so it sees parsed outputs). Attach it before the client sends anything.
 */
export class RequestMeter {
  private ops = new Map<string, OperationStats>();
  private batchDurations: number[] = [];
  /** Receipt handle → when its ReceiveMessage response arrived. */
  private received = new Map<string, number>();
  private startedAt = performance.now();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? (() => performance.now());
    this.startedAt = this.now();
  }

  /** Meters every client of a local stack (its `instrument` option), each under its service's name. */
  attachAll(clients: {
    dynamodb: { middlewareStack: object };
    sqs: { middlewareStack: object };
    s3: { middlewareStack: object };
  }): void {
    for (const [service, client] of Object.entries(clients)) this.attach(client, service);
  }

  /** Joins a client's middleware stack under a service name ("dynamodb", "sqs", …). */
  attach(client: { middlewareStack: object }, service: string): void {
    (client as MeterableClient).middlewareStack.add(
      (next, context) => async (args) => {
        const operation = (context.commandName ?? "Unknown").replace(/Command$/, "");
        const sentAt = this.now();
        if (service === "sqs") this.beforeSqs(operation, args.input, sentAt);
        try {
          const out = await next(args);
          this.record(service, operation, args, out, undefined);
          return out;
        } catch (err) {
          this.record(service, operation, args, undefined, err);
          throw err;
        }
      },
      {
        step: "deserialize",
        priority: "high",
        name: `requestMeter:${service}`,
        tags: ["REQUEST_METER"],
        override: true,
      },
    );
  }

  /** Starts a new window: forgets every count, duration and pending receive. */
  reset(): void {
    this.ops.clear();
    this.batchDurations = [];
    this.received.clear();
    this.startedAt = this.now();
  }

  snapshot(): MeterSnapshot {
    const operations: Record<string, OperationStats> = {};
    for (const [key, stats] of [...this.ops].sort(([a], [b]) => a.localeCompare(b)))
      operations[key] = { ...stats };
    return { operations, batchDurationsMs: [...this.batchDurations], elapsedMs: this.now() - this.startedAt };
  }

  private stats(service: string, operation: string): OperationStats {
    const key = `${service}:${operation}`;
    let s = this.ops.get(key);
    if (!s) {
      s = emptyStats();
      this.ops.set(key, s);
    }
    return s;
  }

  private beforeSqs(operation: string, input: unknown, at: number): void {
    if (operation !== "DeleteMessageBatch" && operation !== "DeleteMessage") return;
    const i = input as { Entries?: { ReceiptHandle?: string }[]; ReceiptHandle?: string };
    const handles = i.Entries ? i.Entries.map((e) => e.ReceiptHandle) : [i.ReceiptHandle];
    let receivedAt: number | undefined;
    for (const h of handles) {
      if (h === undefined) continue;
      const t = this.received.get(h);
      if (t !== undefined) receivedAt = receivedAt === undefined ? t : Math.min(receivedAt, t);
      this.received.delete(h);
    }
    if (operation === "DeleteMessageBatch" && receivedAt !== undefined)
      this.batchDurations.push(at - receivedAt);
  }

  private record(
    service: string,
    operation: string,
    args: DeserializeArgs,
    out: DeserializeOutput | undefined,
    err: unknown,
  ): void {
    const s = this.stats(service, operation);
    if (service === "dynamodb" && !dynamodbBills(err)) {
      s.unbilled += 1;
      return;
    }
    s.requests += 1;
    s.billedRequests += sqsBilledRequests(
      Math.max(contentLength(args.request), contentLength(out?.response)),
    );
    if (err !== undefined) {
      s.errors += 1;
      if (isConditionalFailure(err)) {
        // No ConsumedCapacity comes back with the error, but AWS charges the write (≥ 1 WCU).
        s.conditionalFailures += 1;
        s.unmetered += 1;
        s.assumedWriteUnits += 1;
      }
      return;
    }
    const output = (out?.output ?? {}) as {
      ConsumedCapacity?: Capacity | Capacity[];
      Messages?: { ReceiptHandle?: string }[];
    };
    if (service === "dynamodb") this.addCapacity(s, operation, args.input, output.ConsumedCapacity);
    if (service === "s3" && operation === "PutObject") {
      const days = keptDays(String((args.input as { Key?: string }).Key ?? ""));
      if (days !== undefined) s.storedByteDays += contentLength(args.request) * days;
    }
    if (service === "sqs") {
      const input = args.input as { Entries?: unknown[] };
      if (operation === "ReceiveMessage") {
        const messages = output.Messages ?? [];
        s.messages += messages.length;
        if (messages.length > 0) s.nonEmptyReceives += 1;
        const at = this.now();
        for (const m of messages) if (m.ReceiptHandle) this.received.set(m.ReceiptHandle, at);
      } else if (/^(Delete|Send)Message(Batch)?$/.test(operation)) {
        // Entries, not requests: a parked job sent again is one SendMessage, ten enqueues one batch.
        s.messages += input.Entries?.length ?? 1;
      }
    }
  }

  private addCapacity(
    s: OperationStats,
    operation: string,
    input: object,
    consumed: Capacity | Capacity[] | undefined,
  ): void {
    const isWrite = DYNAMODB_WRITE_OPERATIONS.has(operation);
    const isRead = DYNAMODB_READ_OPERATIONS.has(operation);
    if (consumed === undefined) {
      if (!isWrite && !isRead) return;
      s.unmetered += 1;
      if (isWrite) s.assumedWriteUnits += 1;
      else s.assumedReadUnits += (input as { ConsistentRead?: boolean }).ConsistentRead ? 1 : 0.5;
      return;
    }
    for (const c of Array.isArray(consumed) ? consumed : [consumed]) {
      if (c.ReadCapacityUnits !== undefined || c.WriteCapacityUnits !== undefined) {
        s.readUnits += c.ReadCapacityUnits ?? 0;
        s.writeUnits += c.WriteCapacityUnits ?? 0;
      } else if (isWrite) {
        s.writeUnits += c.CapacityUnits ?? 0;
      } else {
        s.readUnits += c.CapacityUnits ?? 0;
      }
    }
  }
}

/** Sums the stats of every operation that matches. */
export function sumStats(
  snapshot: MeterSnapshot,
  match: (service: string, operation: string) => boolean,
): OperationStats {
  const total = emptyStats();
  for (const [key, s] of Object.entries(snapshot.operations)) {
    const [service = "", operation = ""] = key.split(":");
    if (!match(service, operation)) continue;
    for (const k of Object.keys(total) as (keyof OperationStats)[]) total[k] += s[k];
  }
  return total;
}
