import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";

/** Where claim objects live: the claims bucket, written and read with an injected S3 client. */
export interface ClaimStore {
  s3: S3Client;
  bucket: string;
}

/**
 * putClaim — writes a payload's or result's JSON under its key. Objects are immutable once
 * written: a key names one job's payload or one attempt's result, so a repeat writes the same bytes.
 */
export async function putClaim(claims: ClaimStore, key: string, json: string): Promise<void> {
  await claims.s3.send(
    new PutObjectCommand({
      Bucket: claims.bucket,
      Key: key,
      Body: json,
      ContentType: "application/json",
    }),
  );
}

/** getClaim — the JSON under a key, or undefined once its lifecycle rule has expired it. */
export async function getClaim(claims: ClaimStore, key: string): Promise<string | undefined> {
  try {
    const out = await claims.s3.send(new GetObjectCommand({ Bucket: claims.bucket, Key: key }));
    return await out.Body?.transformToString("utf8");
  } catch (err) {
    if (err instanceof NoSuchKey) return undefined;
    throw err;
  }
}
