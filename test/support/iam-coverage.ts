import type { RecordedCall } from "./aws-call-recorder.ts";

/** One statement of a function's policy, its resources as ARNs (`*` matches any run of characters). */
export interface Permission {
  actions: readonly string[];
  resources: readonly string[];
}

/** Turns what a request names into the ARN IAM checks; undefined when the name is unknown. */
export interface ArnResolver {
  table(name: string): string | undefined;
  queue(url: string): string | undefined;
  eventSourceMapping(uuid: string): string | undefined;
  /** `arn:aws:s3:::<bucket>/<key>` for a bucket this test deployed. */
  object(bucket: string, key: string): string | undefined;
}

/**
 * SQS authorizes each batch call as its single action (SendMessageBatch needs sqs:SendMessage), so
 * policies never name the batch actions. Every other call here is authorized as itself.
 */
const SQS_BATCH_ACTIONS: Record<string, string> = {
  SendMessageBatch: "SendMessage",
  DeleteMessageBatch: "DeleteMessage",
  ChangeMessageVisibilityBatch: "ChangeMessageVisibility",
};

export function iamActionOf(call: RecordedCall): string {
  const operation =
    call.service === "sqs" ? (SQS_BATCH_ACTIONS[call.operation] ?? call.operation) : call.operation;
  return `${call.service}:${operation}`;
}

/** The resource a call acts on: a Query on an index is checked against `<table arn>/index/<name>`. */
export function resourceArnOf(call: RecordedCall, arns: ArnResolver): string | undefined {
  const { tableName, indexName, queueUrl, eventSourceMappingUuid, bucket, key } = call.target;
  if (bucket) return arns.object(bucket, key ?? "");
  if (tableName) {
    const table = arns.table(tableName);
    return table && indexName ? `${table}/index/${indexName}` : table;
  }
  if (queueUrl) return arns.queue(queueUrl);
  if (eventSourceMappingUuid) return arns.eventSourceMapping(eventSourceMappingUuid);
  return undefined;
}

const matches = (pattern: string, arn: string) =>
  new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`).test(arn);
const escapeRegExp = (s: string) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&");

export interface Uncovered {
  action: string;
  resource: string;
}

/**
 * The calls no statement allows: the action listed (no action wildcards are used) on a resource
 * one of that statement's ARNs matches. A call whose resource can't be named is never covered.
 */
export function uncoveredCalls(
  calls: readonly RecordedCall[],
  permissions: readonly Permission[],
  arns: ArnResolver,
): Uncovered[] {
  const out: Uncovered[] = [];
  for (const call of calls) {
    const action = iamActionOf(call);
    const resource = resourceArnOf(call, arns);
    const allowed =
      resource !== undefined &&
      permissions.some((p) => p.actions.includes(action) && p.resources.some((r) => matches(r, resource)));
    if (!allowed) out.push({ action, resource: resource ?? `(unnamed: ${JSON.stringify(call.target)})` });
  }
  return out;
}

/** "service:Operation resource" for each distinct call, sorted: a function's footprint at a glance. */
export function distinctCalls(calls: readonly RecordedCall[], arns: ArnResolver): string[] {
  const lines = calls.map((c) => `${c.service}:${c.operation} ${resourceArnOf(c, arns) ?? "?"}`);
  return [...new Set(lines)].sort();
}
