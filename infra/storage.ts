import { claimLifecycleRules } from "../lib/claims/claim-keys";
import { statusIndex, tableKeys, ttlAttribute } from "../lib/store/table";

/**
 * The jobs table: one sparse status index (scheduled + dead only), TTL on terminal items. SST makes
 * every Dynamo table on-demand with point-in-time recovery; production also gets deletion protection.
 */
export const table = new sst.aws.Dynamo("Jobs", {
  fields: {
    [tableKeys.hashKey]: "string",
    [tableKeys.rangeKey]: "string",
    [statusIndex.hashKey]: "string",
    [statusIndex.rangeKey]: "string",
  },
  primaryIndex: { hashKey: tableKeys.hashKey, rangeKey: tableKeys.rangeKey },
  globalIndexes: { [statusIndex.name]: { hashKey: statusIndex.hashKey, rangeKey: statusIndex.rangeKey } },
  ttl: ttlAttribute,
  deletionProtection: $app.protect,
});

/**
 * The claims bucket (docs/architecture.md §17): payloads and results over 8 KiB, one object each,
 * expired by one lifecycle rule per retention class (lib/claims/claim-keys.ts). Private (SST blocks
 * public access and refuses plain HTTP), and encrypted at rest with S3-managed keys (SSE-S3): the
 * functions need no KMS grant and pay no KMS request per object, which SSE-KMS would add. No CORS:
 * only the functions and the pool read and write it, through the SDK; SST's default rule allows
 * every origin and method.
 */
export const claims = new sst.aws.Bucket("Claims", {
  cors: false,
  lifecycle: claimLifecycleRules().map((rule) => ({
    id: rule.id,
    prefix: rule.prefix,
    expiresIn: `${rule.expirationDays} days` as const,
  })),
});

export const claimsEncryption = new aws.s3.BucketServerSideEncryptionConfiguration("ClaimsEncryption", {
  bucket: claims.name,
  rules: [{ applyServerSideEncryptionByDefault: { sseAlgorithm: "AES256" } }],
});
