/**
 * Pulumi mocks for the offline deploy proof. They run inside the SST program bundle (so they share
 * its @pulumi/pulumi) and stand in for the AWS provider only: every component above it (SST's
 * Function, Queue, Service, ApiGatewayV2, …) is SST's own code. Each registered resource is
 * recorded with its inputs; outputs are the inputs plus the computed attributes the components read.
 */

/**
 * The shapes of @pulumi/pulumi's runtime.Mocks, written out here: @pulumi/pulumi lives in the
 * .sst/platform that `sst install` writes, which the project's type check doesn't see.
 */
interface MockResourceArgs {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
}
interface MockCallArgs {
  token: string;
  inputs: Record<string, unknown>;
}
export interface Mocks {
  newResource(args: MockResourceArgs): { id: string; state: Record<string, unknown> };
  call(args: MockCallArgs): Record<string, unknown>;
}

export const ACCOUNT = "123456789012";
export const REGION = "us-east-1";
/** The account's IoT data endpoint (`iot:Data-ATS`), as aws.iot.getEndpoint answers it. */
export const IOT_ENDPOINT = "a1b2c3d4e5f6g7-ats.iot.us-east-1.amazonaws.com";

export interface RecordedResource {
  type: string;
  name: string;
  inputs: Record<string, unknown>;
  /** The state the mocks answered with: the inputs plus computed attributes (arn, url, uuid, …). */
  outputs: Record<string, unknown>;
  /** The Skyforge component it belongs to (written when the program ends), if any. */
  component?: string;
}
/** An SST component and the args it was built with: Pulumi Outputs show as "<output>". */
export interface ConstructedResource {
  type: string;
  name: string;
  props: Record<string, unknown>;
  /** The Skyforge component it belongs to, if any. */
  component?: string;
}

export interface RecordedCall {
  token: string;
  inputs: Record<string, unknown>;
}

/** A stand-in ARN: the service from the Pulumi type ("aws:sqs/queue:Queue" → sqs), then the name. */
function arnFor(type: string, name: string): string {
  const service = type.split(":")[1]?.split("/")[0] ?? "unknown";
  const resource = type.split(":")[2]?.toLowerCase() ?? "resource";
  return `arn:aws:${service}:${REGION}:${ACCOUNT}:${resource}/${name}`;
}

/** Attributes AWS computes that SST's components read back (ARNs, names, URLs, ids). */
function computed(args: MockResourceArgs): Record<string, unknown> {
  const inputs = args.inputs;
  const name = (inputs.name as string | undefined) ?? `${args.name}-physical`;
  const arn = arnFor(args.type, name);
  const out: Record<string, unknown> = { name, arn, id: `${args.name}-id` };
  switch (args.type) {
    case "aws:sqs/queue:Queue":
      out.url = `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`;
      out.arn = `arn:aws:sqs:${REGION}:${ACCOUNT}:${name}`;
      break;
    case "aws:dynamodb/table:Table":
      out.arn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${name}`;
      out.streamArn = `${out.arn}/stream/2026-01-01T00:00:00.000`;
      break;
    case "aws:lambda/function:Function":
      out.arn = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${name}`;
      out.invokeArn = `arn:aws:apigateway:${REGION}:lambda:path/2015-03-31/functions/${out.arn}/invocations`;
      out.qualifiedArn = `${out.arn}:$LATEST`;
      break;
    case "aws:lambda/eventSourceMapping:EventSourceMapping":
      out.uuid = `${args.name}-uuid`;
      out.arn = `arn:aws:lambda:${REGION}:${ACCOUNT}:event-source-mapping:${out.uuid}`;
      break;
    case "aws:apigatewayv2/api:Api":
      out.apiEndpoint = `https://${args.name}.execute-api.${REGION}.amazonaws.com`;
      out.executionArn = `arn:aws:execute-api:${REGION}:${ACCOUNT}:${args.name}`;
      break;
    case "aws:iam/role:Role":
      out.arn = `arn:aws:iam::${ACCOUNT}:role/${name}`;
      break;
    case "aws:ecr/repository:Repository":
      out.repositoryUrl = `${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/${name}`;
      break;
    case "docker-build:index:Image":
      out.digest = "sha256:0000000000000000000000000000000000000000000000000000000000000000";
      out.ref = `${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com/sst-asset@${out.digest}`;
      break;
    case "aws:cloudwatch/logGroup:LogGroup":
      out.arn = `arn:aws:logs:${REGION}:${ACCOUNT}:log-group:${name}`;
      break;
  }
  return out;
}

/** Renders aws.iam.getPolicyDocument as AWS would: the statements as IAM JSON. */
function policyDocument(inputs: Record<string, unknown>): Record<string, unknown> {
  type Statement = {
    effect?: string;
    actions?: string[];
    resources?: string[];
    principals?: { type: string; identifiers: string[] }[];
    conditions?: { test: string; variable: string; values: string[] }[];
  };
  const statements = (inputs.statements as Statement[] | undefined) ?? [];
  const Statement = statements.map((s) => ({
    Effect: s.effect ?? "Allow",
    ...(s.actions ? { Action: s.actions } : {}),
    ...(s.resources ? { Resource: s.resources } : {}),
    ...(s.principals
      ? { Principal: Object.fromEntries(s.principals.map((p) => [p.type, p.identifiers])) }
      : {}),
    ...(s.conditions
      ? {
          Condition: Object.fromEntries(s.conditions.map((c) => [c.test, { [c.variable]: c.values }])),
        }
      : {}),
  }));
  // The provider echoes its inputs: SST's Function reads `statements` back to decide on a policy.
  return { ...inputs, json: JSON.stringify({ Version: "2012-10-17", Statement }), id: "policy" };
}

/** The data sources SST's components read while building the program. */
function callResult(args: MockCallArgs): Record<string, unknown> {
  switch (args.token) {
    case "aws:index/getRegion:getRegion":
      return { name: REGION, region: REGION, id: REGION, endpoint: `ec2.${REGION}.amazonaws.com` };
    case "aws:index/getPartition:getPartition":
      return { partition: "aws", dnsSuffix: "amazonaws.com", id: "aws", reverseDnsPrefix: "com.amazonaws" };
    case "aws:index/getCallerIdentity:getCallerIdentity":
      return { accountId: ACCOUNT, arn: `arn:aws:iam::${ACCOUNT}:user/ci`, userId: "AIDACI", id: ACCOUNT };
    case "aws:iam/getPolicyDocument:getPolicyDocument":
      return policyDocument(args.inputs);
    case "aws:iot/getEndpoint:getEndpoint":
      return { endpointAddress: IOT_ENDPOINT, endpointType: "iot:Data-ATS", id: IOT_ENDPOINT };
    case "aws:secretsmanager/getRandomPassword:getRandomPassword":
      // A stand-in: the real one is drawn by AWS at the first deploy and kept in the parameter.
      return { randomPassword: "check-deploy-stand-in", id: "random" };
    case "aws:index/getAvailabilityZones:getAvailabilityZones":
      return { names: [`${REGION}a`, `${REGION}b`], zoneIds: ["use1-az1", "use1-az2"], id: REGION };
    case "aws:ecr/getAuthorizationToken:getAuthorizationToken":
      return {
        userName: "AWS",
        password: "token",
        authorizationToken: "QVdTOnRva2Vu",
        proxyEndpoint: `https://${ACCOUNT}.dkr.ecr.${REGION}.amazonaws.com`,
        id: "token",
      };
    default:
      throw new Error(`check:deploy has no answer for the data source ${args.token}`);
  }
}

/** Mocks that record every resource and data-source call into the given arrays. */
export function recordingMocks(resources: RecordedResource[], calls: RecordedCall[]): Mocks {
  return {
    newResource(args) {
      const state = { ...computed(args), ...args.inputs };
      resources.push({ type: args.type, name: args.name, inputs: args.inputs, outputs: state });
      return { id: `${args.name}-id`, state };
    },
    call(args) {
      calls.push({ token: args.token, inputs: args.inputs });
      return callResult(args);
    },
  };
}

/** Plain data for a component's args: Outputs and resources become markers, functions are dropped. */
function plain(value: unknown, isOutput: (v: unknown) => boolean, depth = 0): unknown {
  if (isOutput(value)) return "<output>";
  if (typeof value === "function") return undefined;
  if (value === null || typeof value !== "object") return value;
  if (depth > 6 || "urn" in value) return "<resource>";
  if (Array.isArray(value)) return value.map((v) => plain(v, isOutput, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v, isOutput, depth + 1)]));
}

interface LiveComponent {
  type: string;
  name: string;
  args: unknown;
}

/**
 * Records every SST component as it is constructed, through SST's own `$transform` hook, registered
 * for each component class of `sst.aws` (SST hands Pulumi empty props for its components, so a stack
 * transformation can't see their args). The args are kept by reference and read at the end
 * (`constructedComponents`), after every later transform (sst.config.ts's defaults) changed them.
 */
export function recordComponents(
  classes: readonly unknown[],
  transform: (cls: unknown, cb: (args: unknown, opts: unknown, name: string) => void) => void,
  into: LiveComponent[],
): void {
  for (const cls of classes) {
    const type = (cls as { __pulumiType?: unknown } | undefined)?.__pulumiType;
    if (typeof cls !== "function" || typeof type !== "string" || !type.startsWith("sst:")) continue;
    transform(cls, (args, _opts, name) => into.push({ type, name, args }));
  }
}

export function constructedComponents(
  live: readonly LiveComponent[],
  isOutput: (v: unknown) => boolean,
): ConstructedResource[] {
  return live.map((c) => ({
    type: c.type,
    name: c.name,
    props: plain(c.args, isOutput) as Record<string, unknown>,
  }));
}
