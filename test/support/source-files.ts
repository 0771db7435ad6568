import { readdirSync } from "node:fs";
import { join } from "node:path";

/** The repository's root, for the tests that read its sources. */
export const ROOT = join(import.meta.dirname, "..", "..");

/** Every .ts file below `dir`, at any depth: the sources a rule over lib/ reads. */
export function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}
