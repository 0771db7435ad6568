import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectRoot } from "./project-copy.ts";

/** One fenced code block of a document: its language, text, line, and the marker comment above it. */
export interface DocBlock {
  lang: string;
  text: string;
  /** 1-based line of its opening fence. */
  line: number;
  /** `<!-- … -->` on the line before the fence: how the block is checked ("checked by …", "not run: …"). */
  marker?: string;
}

/** Every fenced code block of a document of the repo (path from the root), in order. */
export function docBlocks(path: string): DocBlock[] {
  const lines = readFileSync(join(projectRoot, path), "utf8").split("\n");
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)/.exec(lines[i] ?? "");
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
    const marker = /^<!-- (.*) -->$/.exec(lines[i - 1] ?? "")?.[1];
    blocks.push({
      lang: open[1] ?? "",
      text: `${lines.slice(i + 1, end).join("\n")}\n`,
      line: i + 1,
      ...(marker ? { marker } : {}),
    });
    i = end;
  }
  return blocks;
}

/** The fenced code blocks of one language in a document of the repo, in order. */
export function codeBlocks(path: string, lang: string): string[] {
  return docBlocks(path)
    .filter((b) => b.lang === lang)
    .map((b) => b.text);
}

/** An HTTP block's request: its method, path (without the query) and JSON body. */
export function httpRequestOf(block: string): { method: string; path: string; body: unknown } {
  const [requestLine = "", ...rest] = block.split("\n");
  const [method = "", target = ""] = requestLine.split(" ");
  const body = JSON.parse(rest.slice(rest.indexOf("") + 1).join("\n"));
  return { method, path: target.split("?")[0] ?? "", body };
}
