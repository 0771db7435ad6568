import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./project-copy.ts";

/** The fenced code blocks of one language in a document of the repo (path from the root), in order. */
export function codeBlocks(path: string, lang: string): string[] {
  const text = readFileSync(join(projectRoot, path), "utf8");
  return [...text.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, "g"))].map((m) => m[1] ?? "");
}

/** An HTTP block's request: its method, path (without the query) and JSON body. */
export function httpRequestOf(block: string): { method: string; path: string; body: unknown } {
  const [requestLine = "", ...rest] = block.split("\n");
  const [method = "", target = ""] = requestLine.split(" ");
  const body = JSON.parse(rest.slice(rest.indexOf("") + 1).join("\n"));
  return { method, path: target.split("?")[0] ?? "", body };
}
