import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";

/**
 * A file's SHA-256 (hex), or undefined when it can't be read: what the build stamp
 * (scripts/build-stamp.ts) and the function bundles' cache (scripts/deploy/bundle-cache.ts) key
 * their outputs by, content rather than mtimes.
 */
export async function fileSha256(file: string): Promise<string | undefined> {
  try {
    return createHash("sha256")
      .update(await readFile(file))
      .digest("hex");
  } catch {
    return undefined;
  }
}
