import type { RecordedCall } from "./aws-call-recorder.ts";

/** One statement of a function's policy, its resources as ARNs (`*` matches any run of characters). */
export interface Permission {
  actions: readonly string[];
  resources: readonly string[];
  /** Operator → context key → values, as IAM writes it; every one must hold. */
  conditions?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
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

/**
 * The request's values for the DynamoDB condition keys skyforge's grants use, as the AWS docs
 * describe them ("Using IAM policy conditions for fine-grained access control"): the partition key
 * for dynamodb:LeadingKeys, the top-level attributes it names for dynamodb:Attributes (undefined when
 * it has the whole item returned, which no list allows), its ReturnValues for dynamodb:ReturnValues.
 */
function contextValues(call: RecordedCall, variable: string): readonly string[] | undefined {
  const { partitionKey, attributes, returnValues } = call.target;
  if (variable === "dynamodb:LeadingKeys") return partitionKey === undefined ? [] : [partitionKey];
  if (variable === "dynamodb:Attributes") return attributes === "all" ? undefined : (attributes ?? []);
  if (variable === "dynamodb:ReturnValues") return returnValues === undefined ? [] : [returnValues];
  return undefined;
}

const likeAny = (value: string, patterns: readonly string[]) => patterns.some((p) => matches(p, value));

/** Whether every condition of a statement holds for the call; an operator or key unknown here fails. */
function conditionsHold(call: RecordedCall, conditions: Permission["conditions"]): boolean {
  return Object.entries(conditions ?? {}).every(([test, keys]) =>
    Object.entries(keys).every(([variable, allowed]) => {
      const values = contextValues(call, variable);
      if (values === undefined) return false;
      switch (test) {
        case "ForAllValues:StringLike":
          return values.every((v) => likeAny(v, allowed));
        case "ForAllValues:StringEquals":
          return values.every((v) => allowed.includes(v));
        case "StringEquals":
          return values.length === 1 && allowed.includes(values[0] as string);
        default:
          return false;
      }
    }),
  );
}

export interface Uncovered {
  action: string;
  resource: string;
  /** A DynamoDB item call's: what the conditions were checked against. */
  attributes?: string[] | "all";
  returnValues?: string;
}

/**
 * The calls no statement allows: the action listed (no action wildcards are used) on a resource
 * one of that statement's ARNs matches, with every condition of it holding. A call whose resource
 * can't be named is never covered.
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
      permissions.some(
        (p) =>
          p.actions.includes(action) &&
          p.resources.some((r) => matches(r, resource)) &&
          conditionsHold(call, p.conditions),
      );
    if (!allowed)
      out.push({
        action,
        resource: resource ?? `(unnamed: ${JSON.stringify(call.target)})`,
        ...(call.target.attributes ? { attributes: call.target.attributes } : {}),
        ...(call.target.returnValues ? { returnValues: call.target.returnValues } : {}),
      });
  }
  return out;
}

/** "service:Operation resource" for each distinct call, sorted: a function's footprint at a glance. */
export function distinctCalls(calls: readonly RecordedCall[], arns: ArnResolver): string[] {
  const lines = calls.map((c) => `${c.service}:${c.operation} ${resourceArnOf(c, arns) ?? "?"}`);
  return [...new Set(lines)].sort();
}
