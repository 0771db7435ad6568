import {
  CreateTableCommand,
  type DynamoDBClient,
  GetItemCommand,
  waitUntilTableExists,
} from "@aws-sdk/client-dynamodb";
import { HeadObjectCommand, NotFound, type S3Client } from "@aws-sdk/client-s3";
import { ListQueuesCommand, type SQSClient } from "@aws-sdk/client-sqs";
import { CLAIMS_BUCKET } from "../../local/emulators.ts";
import { REBOUND } from "./console-browser.ts";
import { type RawRequest, sigV4 } from "./emulator-ports.ts";

/**
 * Requests with an effect on each emulator port of the local stack, as the SDK sends them, and the
 * ways a web page or a stray caller would change them: for the emulator-security tests.
 */
export interface Probe {
  name: string;
  endpoint(): string;
  /** The SigV4 service name its requests are signed for. */
  service: string;
  /** The request as the SDK sends it: its own Host, the local credential, no Origin. */
  request(id: string): RawRequest;
  /** Whether the request with this id took effect, asked through the SDK with the right credentials. */
  happened(id: string): Promise<boolean>;
}

export interface EmulatorClients {
  endpoints: { dynamodb: string; sqs: string };
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  s3: S3Client;
}

/** Where probe items go: a table of their own, which nothing in the stack reads. */
export const PROBE_TABLE = "emulator-security-probes";
export const OTHER_KEY = "AKIAIOSFODNN7EXAMPLE";
export const claimKey = (id: string) => `claims/1d/${id}/payload`;

export async function createProbeTable(dynamodb: DynamoDBClient): Promise<void> {
  await dynamodb.send(
    new CreateTableCommand({
      TableName: PROBE_TABLE,
      AttributeDefinitions: [{ AttributeName: "pk", AttributeType: "S" }],
      KeySchema: [{ AttributeName: "pk", KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  await waitUntilTableExists({ client: dynamodb, minDelay: 1, maxWaitTime: 10 }, { TableName: PROBE_TABLE });
}

export const itemExists = async (dynamodb: DynamoDBClient, id: string) =>
  (
    await dynamodb.send(
      new GetItemCommand({ TableName: PROBE_TABLE, Key: { pk: { S: id } }, ConsistentRead: true }),
    )
  ).Item !== undefined;

export const objectExists = (s3: S3Client, key: string) =>
  s3.send(new HeadObjectCommand({ Bucket: CLAIMS_BUCKET, Key: key })).then(
    () => true,
    (err: unknown) => (err instanceof NotFound ? false : Promise.reject(err)),
  );

export const amzJson = (target: string) => ({
  "content-type": "application/x-amz-json-1.0",
  "x-amz-target": target,
});

/**
 * dynalite's PutItem; fauxqs's SQS CreateQueue and S3 PutObject (one port). `clients` is read at
 * each use, so the list can name a test's cases before the stack has started.
 */
export function emulatorProbes(clients: () => EmulatorClients): Probe[] {
  /** A probe of `service` on the emulator behind `port` (fauxqs serves S3 on its SQS port), signed as the SDK signs. */
  const probe = (
    name: string,
    port: keyof EmulatorClients["endpoints"],
    service: string,
    unsigned: (id: string) => Omit<RawRequest, "headers"> & { headers: object },
    happened: (id: string) => Promise<boolean>,
  ): Probe => ({
    name,
    endpoint: () => clients().endpoints[port],
    service,
    request: (id) => {
      const r = unsigned(id);
      const host = new URL(clients().endpoints[port]).host;
      return { ...r, headers: { ...r.headers, host, ...sigV4("local", service) } };
    },
    happened,
  });
  return [
    probe(
      "dynalite PutItem",
      "dynamodb",
      "dynamodb",
      (id) => ({
        method: "POST",
        path: "/",
        headers: amzJson("DynamoDB_20120810.PutItem"),
        body: JSON.stringify({ TableName: PROBE_TABLE, Item: { pk: { S: id } } }),
      }),
      (id) => itemExists(clients().dynamodb, id),
    ),
    probe(
      "fauxqs SQS CreateQueue",
      "sqs",
      "sqs",
      (id) => ({
        method: "POST",
        path: "/",
        headers: amzJson("AmazonSQS.CreateQueue"),
        body: JSON.stringify({ QueueName: id }),
      }),
      async (id) =>
        ((await clients().sqs.send(new ListQueuesCommand({ QueueNamePrefix: id }))).QueueUrls ?? []).length >
        0,
    ),
    probe(
      "fauxqs S3 PutObject",
      "sqs",
      "s3",
      (id) => ({
        method: "PUT",
        path: `/${CLAIMS_BUCKET}/${claimKey(id)}`,
        headers: { "content-type": "application/octet-stream" },
        body: "planted",
      }),
      (id) => objectExists(clients().s3, claimKey(id)),
    ),
  ];
}

const without = (headers: Record<string, string>, name: string) =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => k !== name));

/** How a page or a stray caller's request differs from the SDK's; `port` is the emulator's. */
export interface Variant {
  name: string;
  change(r: RawRequest, port: number, service: string): RawRequest;
}

export const refusedVariants: Variant[] = [
  {
    name: "an Origin header (a page on a loopback origin)",
    change: (r) => ({ ...r, headers: { ...r.headers, origin: "http://localhost:8000" } }),
  },
  {
    name: "a CORS preflight",
    change: (r) => ({
      method: "OPTIONS",
      path: r.path,
      headers: {
        host: r.headers.host as string,
        origin: "http://localhost:8000",
        "access-control-request-method": r.method,
        "access-control-request-headers": "authorization,content-type,x-amz-date,x-amz-target",
      },
    }),
  },
  {
    name: "a rebinding Host",
    change: (r, port) => ({ ...r, headers: { ...r.headers, host: `${REBOUND}:${port}` } }),
  },
  {
    name: "a loopback Host naming another port",
    change: (r) => ({ ...r, headers: { ...r.headers, host: "127.0.0.1:1" } }),
  },
  {
    name: "another access key id",
    change: (r, _port, service) => ({ ...r, headers: { ...r.headers, ...sigV4(OTHER_KEY, service) } }),
  },
  { name: "no Authorization", change: (r) => ({ ...r, headers: without(r.headers, "authorization") }) },
  {
    name: "query-string auth (a presigned URL)",
    change: (r) => ({
      ...r,
      path: `${r.path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=local%2F20260101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260101T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature=00`,
      headers: without(r.headers, "authorization"),
    }),
  },
];
