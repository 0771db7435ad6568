import { claimLifecycleRules } from "../../lib/claims/claim-keys.ts";
import { containerEnvironments } from "./hygiene-assertions.ts";
import type { RecordedResource } from "./pulumi-mocks.ts";
import type { StageResources } from "./stage-resources.ts";

/**
 * The claims bucket as SST rendered it (docs/architecture.md §17): encrypted at rest, public access
 * blocked, one lifecycle rule per retention class exactly as lib/claims/claim-keys.ts lists them,
 * and its name given to every function and the pool task.
 */

const forBucket = (stage: StageResources, type: string, bucket: RecordedResource) =>
  stage.ofType(type).filter((r) => r.inputs.bucket === bucket.outputs.bucket);

export function claimsBucketFailures(stage: StageResources): string[] {
  const buckets = stage
    .ofType("aws:s3/bucket:Bucket")
    .filter((b) => b.name.startsWith(`${stage.prefix}Claims`));
  const bucket = buckets[0];
  if (!bucket || buckets.length > 1) return [`expected one claims bucket, found ${buckets.length}`];
  const failures: string[] = [];
  const name = bucket.outputs.bucket as string;

  const sse = forBucket(
    stage,
    "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
    bucket,
  );
  const algorithms = sse.flatMap((c) =>
    ((c.inputs.rules as { applyServerSideEncryptionByDefault?: { sseAlgorithm?: string } }[]) ?? []).map(
      (r) => r.applyServerSideEncryptionByDefault?.sseAlgorithm,
    ),
  );
  if (algorithms.length !== 1 || algorithms[0] !== "AES256")
    failures.push(`the claims bucket's default encryption is ${JSON.stringify(algorithms)}, not SSE-S3`);

  const blocks = forBucket(stage, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", bucket);
  const flags = ["blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"];
  if (blocks.length !== 1 || !flags.every((f) => blocks[0]?.inputs[f] === true))
    failures.push("the claims bucket does not block all public access");

  const lifecycles = forBucket(
    stage,
    "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
    bucket,
  );
  const rules = (lifecycles[0]?.inputs.rules ?? []) as {
    id: string;
    status: string;
    expiration?: { days?: number };
    filter?: { prefix?: string };
  }[];
  const rendered = rules.map((r) => ({
    id: r.id,
    prefix: r.filter?.prefix,
    expirationDays: r.status === "Enabled" ? r.expiration?.days : undefined,
  }));
  if (lifecycles.length !== 1 || JSON.stringify(rendered) !== JSON.stringify(claimLifecycleRules()))
    failures.push(
      `the claims bucket's lifecycle rules are not lib/claims/claim-keys.ts's: ${JSON.stringify(rendered)}`,
    );

  const envs = [
    // Every function that builds an engine; the realtime authorizer builds none (it reads the secret only).
    ...stage.functions
      .filter((fn) => stage.handlerOf(fn) !== stage.report.handlers["realtime-authorizer"])
      .map((fn) => [`function ${fn.name}`, stage.env(fn)] as const),
    ...containerEnvironments(stage).map((env) => ["the pool task", env] as const),
  ];
  for (const [owner, env] of envs) {
    if (env.SKYFORGE_CLAIMS_BUCKET !== name)
      failures.push(`${owner} has SKYFORGE_CLAIMS_BUCKET ${env.SKYFORGE_CLAIMS_BUCKET}, not ${name}`);
  }
  return failures;
}
