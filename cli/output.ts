import Table from "cli-table3";
import type { ErrorReport } from "./exit-codes.ts";

/**
 * Where a command's answer goes. With `--json`, stdout carries exactly one JSON document (tail: one
 * per line) and errors go to stderr as `{ "error": { code, message, … } }`, so a script can parse
 * both; without it, tables and sentences for a person. Progress and notes always go to stderr.
 */
export interface Output {
  readonly json: boolean;
  /** The command's answer: `value` as JSON, or `human()` rendered for a person. */
  result(value: unknown, human: () => string): void;
  /** One line of a stream of results (tail): one JSON object per line, or the human line. */
  line(value: unknown, human: () => string): void;
  /** A side remark for a person (progress, hints); never on stdout. */
  note(text: string): void;
  error(report: ErrorReport): void;
}

export interface Streams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

export function createOutput(json: boolean, streams: Streams = process): Output {
  const out = (text: string) => streams.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  const err = (text: string) => streams.stderr.write(text.endsWith("\n") ? text : `${text}\n`);
  // JSON is written exactly, with every control character escaped (jsonText); text for a person is
  // written with none that a terminal would obey.
  return {
    json,
    result: (value, human) => out(json ? jsonText(value) : terminalText(human())),
    line: (value, human) => out(json ? jsonText(value) : terminalText(human())),
    note: (text) => err(terminalText(text)),
    error: (report) => err(json ? jsonText({ error: report }) : terminalText(humanError(report))),
  };
}

/**
 * JSON with the controls JSON.stringify leaves raw (C1, the bidi controls) written as `\uXXXX`
 * escapes too: the same value for a parser, and nothing a terminal obeys when a person runs --json.
 * Outside strings JSON text is ASCII, so every one of them is inside a string, where an escape is valid.
 */
const RAW_IN_JSON = /[\u0080-\u009F\u202A-\u202E\u2066-\u2069]/g;
export const jsonText = (value: unknown): string =>
  JSON.stringify(value).replace(RAW_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

function humanError(report: ErrorReport): string {
  const status = report.status ? ` (HTTP ${report.status})` : "";
  const issues = (report.issues ?? []).map((i) => `\n  ${oneLine(i.path)}: ${oneLine(i.message)}`).join("");
  return `error: ${report.code}${status}: ${oneLine(report.message)}${issues}`;
}

/**
 * C0 and C1 control characters but the line feed, and the bidirectional embedding, override and
 * isolate controls (U+202A–U+202E, U+2066–U+2069). A job's error, payload or unique key, or an API
 * message, is anyone's text: ESC (or the one-byte CSI U+009B) starts an ANSI or OSC sequence that
 * recolours, retitles or rewrites the screen, a CR overwrites the line, and a bidi control reorders
 * what follows it on the line, so an id, a kind or a status can read as another ("Trojan Source").
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const CONTROL = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/g;

/**
 * A control character as a visible stand-in: ␛ for ESC (U+2400's control pictures), a space for a
 * tab, � for C1, and its code point for a bidi control (`<U+202E>`), which has no picture.
 */
const standIn = (c: string): string => {
  const code = c.charCodeAt(0);
  if (c === "\t") return " ";
  if (code < 0x20) return String.fromCharCode(0x2400 + code);
  if (code >= 0x2000) return `<U+${code.toString(16).toUpperCase()}>`;
  return code === 0x7f ? "\u2421" : "\ufffd";
};

/** Text for a terminal: every control character but the line feed shown, not obeyed. */
export const terminalText = (text: string): string => text.replace(CONTROL, standIn);

/** Text for one line (a table cell, a tail line): also each line break shown as ↵. */
export const oneLine = (text: string): string => terminalText(text.replace(/\r?\n/g, "\u21b5"));

/** Resolves once everything written so far has reached stdout and stderr, so exiting loses nothing. */
export async function flushed(streams: Streams = process): Promise<void> {
  await Promise.all(
    [streams.stdout, streams.stderr].map((s) => new Promise<void>((resolve) => s.write("", () => resolve()))),
  );
}

/** A borderless table, columns aligned, like `kubectl get`: easy to read and to grep. */
export function table(head: readonly string[], rows: readonly (readonly Cell[])[]): string {
  const t = new Table({
    head: [...head],
    chars: {
      top: "",
      "top-mid": "",
      "top-left": "",
      "top-right": "",
      bottom: "",
      "bottom-mid": "",
      "bottom-left": "",
      "bottom-right": "",
      left: "",
      "left-mid": "",
      mid: "",
      "mid-mid": "",
      right: "",
      "right-mid": "",
      middle: "  ",
    },
    style: { "padding-left": 0, "padding-right": 0, head: [], border: [] },
  });
  for (const row of rows) t.push(row.map(cell));
  return t.toString().replace(/[ \t]+$/gm, "");
}

/** Rows of `name  value`, for one object (a job, a queue). */
export function keyValues(rows: readonly (readonly [string, Cell])[]): string {
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${cell(v)}`).join("\n");
}

export type Cell = string | number | boolean | null | undefined;

/** Cells are the API's and jobs' text: one line each, with no control character a terminal would obey. */
function cell(value: Cell): string {
  if (value === undefined || value === null || value === "") return "-";
  return oneLine(String(value));
}

/** An API time as a person reads it: seconds, UTC, no milliseconds ("2026-11-23 18:59:26Z"). */
export function shortTime(iso: string | undefined): string | undefined {
  if (!iso) return undefined;
  return iso.replace("T", " ").replace(/\.\d+Z$/, "Z");
}

/** Compact JSON on one line, clipped for a table cell. */
export function inlineJson(value: unknown, max = 60): string | undefined {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value) ?? "";
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
