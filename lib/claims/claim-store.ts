import type { S3Client } from "@aws-sdk/client-s3";
import { checkFormat, FORMAT_VERSION, STORED_FORMATS } from "../store/stored-formats.ts";

/** What the claim check asks of its S3 client: send. An S3Client, or s3OnFirstUse's stand-in. */
export type ClaimsS3 = Pick<S3Client, "send">;

/** Where claim objects live: the claims bucket, written and read with an injected S3 client. */
export interface ClaimStore {
  s3: ClaimsS3;
  bucket: string;
}

/**
 * The S3 package is loaded on first use: only payloads and results over 8 KiB need it, and
 * loading it took about a fifth of a Lambda function's cold import (scripts/cold-start.ts).
 */
const s3Package = () => import("@aws-sdk/client-s3");

/**
 * A client that makes the real one (make: the S3 package's S3Client, built as the caller wants)
 * on its first send, once; each send, in any of its forms, is passed on to it unchanged.
 */
export function s3OnFirstUse(make: (s3: typeof import("@aws-sdk/client-s3")) => S3Client): ClaimsS3 {
  let client: Promise<S3Client> | undefined;
  const send = (...args: Parameters<S3Client["send"]>) => {
    client ??= s3Package().then(make);
    return client.then((c) => (c.send as (...a: typeof args) => unknown)(...args));
  };
  // The cast: TypeScript can't check an arrow against send's overloads; the forwarding keeps each form.
  return { send: send as S3Client["send"] };
}

/**
 * putClaim — writes a payload's or result's JSON under its key. Objects are immutable once
 * written: a key names one job's payload or one attempt's result, so a repeat writes the same bytes.
 */
export async function putClaim(claims: ClaimStore, key: string, json: string): Promise<void> {
  const { PutObjectCommand } = await s3Package();
  await claims.s3.send(
    new PutObjectCommand({
      Bucket: claims.bucket,
      Key: key,
      Body: json,
      ContentType: "application/json",
      // The object's format version (lib/store/stored-formats.ts): user metadata, no extra request.
      Metadata: { [FORMAT_VERSION]: String(STORED_FORMATS.claimObject) },
    }),
  );
}

/**
 * copyClaim — the object under `from` copied, as it is, under `to` (one request; S3 reads it under
 * the caller's GetObject right and writes it under its PutObject right). false when `from` is gone.
 */
export async function copyClaim(claims: ClaimStore, from: string, to: string): Promise<boolean> {
  const { CopyObjectCommand, NoSuchKey } = await s3Package();
  try {
    await claims.s3.send(
      new CopyObjectCommand({
        Bucket: claims.bucket,
        Key: to,
        CopySource: `${claims.bucket}/${encodeURI(from)}`,
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof NoSuchKey) return false;
    throw err;
  }
}

/** getClaim — the JSON under a key, or undefined once its lifecycle rule has expired it. */
export async function getClaim(claims: ClaimStore, key: string): Promise<string | undefined> {
  const { GetObjectCommand, NoSuchKey } = await s3Package();
  try {
    const out = await claims.s3.send(new GetObjectCommand({ Bucket: claims.bucket, Key: key }));
    const version = Number(out.Metadata?.[FORMAT_VERSION] ?? 1);
    checkFormat("claimObject", { [FORMAT_VERSION]: version }, `claims object ${key}`);
    return await out.Body?.transformToString("utf8");
  } catch (err) {
    if (err instanceof NoSuchKey) return undefined;
    throw err;
  }
}
