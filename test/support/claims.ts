import { S3Client } from "@aws-sdk/client-s3";
import type { ClaimStore } from "../../lib/claims/claim-store.ts";

/**
 * For engines whose test sends nothing over the claim check's threshold (mocked clients, route
 * wiring): an S3 client aimed at a closed loopback port, so any call it does make fails loudly.
 */
export function unreachableClaims(): { s3: S3Client; claimsBucket: string } {
  return {
    s3: new S3Client({
      region: "us-east-1",
      endpoint: "http://127.0.0.1:9",
      forcePathStyle: true,
      credentials: { accessKeyId: "unit", secretAccessKey: "unit" },
      maxAttempts: 1,
    }),
    claimsBucket: "unreachable",
  };
}

/** unreachableClaims as the engine's ClaimStore, for services built without buildEngine. */
export function unreachableClaimStore(): ClaimStore {
  const { s3, claimsBucket } = unreachableClaims();
  return { s3, bucket: claimsBucket };
}
