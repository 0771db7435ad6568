/**
 * Reads a documentation block of curl commands as a script of requests, each with the answer the
 * document shows (test/e2e/doc-examples.test.ts runs them against `npm start`). What a block may
 * hold: curl lines (continued with `\`), a `for v in a b c; do curl …; echo; done` loop, and
 * comments: `# 201 {…}` or `# {…}` is the answer to the request before it (a loop's answers in
 * order), `# … GET /path → "key":value…` is one more request with its answer, anything else prose.
 * Placeholders in a path: an id shown as `01K…` or `01M…`, `<id>`, `<one of the ids>` stand for the
 * last id an answer gave; `<field>` for the last value of that field.
 */
export interface DocRequest {
  method: string;
  path: string;
  body?: string;
  /** The answer the document shows: its status (absent: any 2xx) and the JSON it quotes. */
  expect: { status?: number; json?: string };
}

/** Splits a command line into words as a POSIX shell would for these blocks: quotes and escapes. */
export function shellWords(line: string, vars: Record<string, string> = {}): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) throw new Error(`an unclosed quote in: ${line}`);
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = "";
      for (i++; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\" && '"\\$'.includes(line[i + 1] ?? "")) text += line[++i];
        else if (line[i] === "$") {
          const name = /^\$(\w+)/.exec(line.slice(i))?.[1] ?? "";
          text += vars[name] ?? "";
          i += name.length;
        } else text += line[i];
      }
      word = (word ?? "") + text;
    } else if (c === " " || c === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "#" && word === undefined) {
      break;
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** One curl command's request: method, path on the stack (host and port dropped) and body. */
export function curlRequest(words: readonly string[]): Omit<DocRequest, "expect"> {
  let method: string | undefined;
  let body: string | undefined;
  let url = "";
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (w === "-X") method = words[++i];
    else if (w.startsWith("-X")) method = w.slice(2);
    else if (w === "-d") body = words[++i];
    else if (w === "-H") i++;
    else if (!w.startsWith("-")) url = w;
  }
  const path = url.replace(/^(https?:\/\/)?(localhost|127\.0\.0\.1):3000/, "");
  return { method: method ?? (body === undefined ? "GET" : "POST"), path, ...(body ? { body } : {}) };
}

const ANSWER = /^# (?:…\s*)?(?:(\d{3}) )?([{"].*)$/;
const PROSE_GET = /GET (\/\S+) → (.*)$/;

/** Lines joined where a single-quoted word (a JSON body) runs on over several. */
function joinQuoted(lines: readonly string[]): string[] {
  const out: string[] = [];
  let open = "";
  for (const line of lines) {
    const text = open ? `${open}\n${line}` : line;
    const quotes = (text.startsWith("#") ? "" : text).split("'").length - 1;
    if (quotes % 2 === 1) open = text;
    else {
      out.push(text);
      open = "";
    }
  }
  if (open) out.push(open);
  return out;
}

/** The block's requests in order, each with the answer the document shows for it. */
export function docRequests(block: string): DocRequest[] {
  const lines = joinQuoted(block.replace(/\\\n\s*/g, " ").split("\n"));
  const requests: DocRequest[] = [];
  let pending: DocRequest[] = [];
  for (const raw of lines) {
    const command = raw.trim();
    if (!command) continue;
    if (command.startsWith("#")) {
      const line = command;
      const answer = ANSWER.exec(line);
      const get = PROSE_GET.exec(line);
      if (answer && pending.length) {
        const request = pending.shift() as DocRequest;
        request.expect = { ...(answer[1] ? { status: Number(answer[1]) } : {}), json: answer[2] as string };
      } else if (get) {
        requests.push({ method: "GET", path: get[1] as string, expect: { json: get[2] as string } });
        pending = [];
      }
      continue;
    }
    // A placeholder of several words (`<one of the ids>`) is one word, for the last id.
    const line = command.replace(/<[^>]*\s[^>]*>/g, "<id>");
    const loop = /^for (\w+) in ([^;]+); do (.*?);(?: echo;)? done$/.exec(line);
    const made = loop
      ? (loop[2] as string)
          .trim()
          .split(/\s+/)
          .map((value) => curlRequest(shellWords(loop[3] as string, { [loop[1] as string]: value })))
      : [curlRequest(shellWords(line))];
    pending = made.map((r) => ({ ...r, expect: {} }));
    requests.push(...pending);
  }
  return requests;
}

/**
 * The fields a quoted answer shows with a whole literal value (strings, numbers, booleans), each by
 * its path of keys (`result.status` in `"result":{"status":"done"}`; an array's items are searched
 * by the caller). An id or time shown by example (`01K…`, `"…"`) is not a value to compare.
 */
export function shownFields(json: string): [path: string[], value: unknown][] {
  const pairs: [string[], unknown][] = [];
  const stack: (string | undefined)[] = [];
  let key: string | undefined;
  const token = /"((?:[^"\\]|\\.)*)"\s*(:)?|(-?\d+(?:\.\d+)?|true|false)|([{[])|([}\]])/g;
  for (const m of json.matchAll(token)) {
    if (m[2]) {
      key = m[1];
      continue;
    }
    if (m[4]) {
      stack.push(key);
      key = undefined;
      continue;
    }
    if (m[5]) {
      stack.pop();
      key = undefined;
      continue;
    }
    const value: unknown = m[3] !== undefined ? JSON.parse(m[3]) : m[1];
    if (key !== undefined) {
      const shownByExample = typeof value === "string" && (value.includes("…") || /^01[A-Z]/.test(value));
      if (!shownByExample) pairs.push([[...stack.filter((k): k is string => k !== undefined), key], value]);
    }
    key = undefined;
  }
  return pairs;
}

/** Every key an answer quotes, whatever its value. */
export const shownKeys = (json: string) => [...json.matchAll(/"(\w+)":/g)].map((m) => m[1] as string);
