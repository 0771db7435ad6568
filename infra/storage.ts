import { claimLifecycleRules } from "../lib/claims/claim-keys";
import { statusIndex, tableKeys, ttlAttribute } from "../lib/store/table";
import { type Build, childName, childOpts } from "./build";
import { transformed } from "./skyforge-args";

/**
 * The jobs table: one sparse status index (scheduled + dead only), TTL on terminal items. SST makes
 * every Dynamo table on-demand with point-in-time recovery; a protected stage's table also gets
 * deletion protection ($app.protect: production, sst.config.ts).
 *
 * The claims bucket (docs/architecture.md §17): payloads and results over 8 KiB, one object each,
 * expired by one lifecycle rule per retention class (lib/claims/claim-keys.ts). Private (SST blocks
 * public access and refuses plain HTTP), and encrypted at rest with S3-managed keys (SSE-S3): the
 * functions need no KMS grant and pay no KMS request per object, which SSE-KMS would add. No CORS:
 * only the functions and the pool read and write it, through the SDK; SST's default rule allows
 * every origin and method.
 */
export function createStorage(build: Build) {
  const tableName = childName(build, "Table");
  const table = new sst.aws.Dynamo(
    tableName,
    transformed(
      build.args.transform?.table,
      tableName,
      {
        fields: {
          [tableKeys.hashKey]: "string",
          [tableKeys.rangeKey]: "string",
          [statusIndex.hashKey]: "string",
          [statusIndex.rangeKey]: "string",
        },
        primaryIndex: { hashKey: tableKeys.hashKey, rangeKey: tableKeys.rangeKey },
        globalIndexes: {
          [statusIndex.name]: { hashKey: statusIndex.hashKey, rangeKey: statusIndex.rangeKey },
        },
        ttl: ttlAttribute,
        deletionProtection: $app.protect === true,
      },
      childOpts(build),
    ),
    childOpts(build),
  );

  const claimsName = childName(build, "Claims");
  const claims = new sst.aws.Bucket(
    claimsName,
    transformed(
      build.args.transform?.claims,
      claimsName,
      {
        cors: false,
        lifecycle: claimLifecycleRules().map((rule) => ({
          id: rule.id,
          prefix: rule.prefix,
          expiresIn: `${rule.expirationDays} days` as const,
        })),
      },
      childOpts(build),
    ),
    childOpts(build),
  );
  new aws.s3.BucketServerSideEncryptionConfiguration(
    childName(build, "ClaimsEncryption"),
    { bucket: claims.name, rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }] },
    childOpts(build),
  );

  /** What every function and the pool need to find the table and the claims bucket (names, never secrets). */
  const env = { SKYFORGE_TABLE: table.name, SKYFORGE_CLAIMS_BUCKET: claims.name };
  return { table, claims, env };
}
export type Storage = ReturnType<typeof createStorage>;
