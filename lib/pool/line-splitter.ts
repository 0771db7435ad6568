import type { Readable } from "node:stream";

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

export interface LineSplitterOptions {
  /**
   * The longest line read whole, in bytes before its "\n". Asked again for every chunk, so a reader
   * may allow more while it expects a bigger line (a batch call's reply).
   */
  maxBytes: number | (() => number);
  onLine(line: string): void;
  /**
   * A line grew past `maxBytes`. `head` is its first `maxBytes` bytes at most; the rest of that
   * line, up to its "\n", is dropped unread, and the lines after it are read as usual.
   */
  onOverlong(head: Buffer, maxBytes: number): void;
}

/**
 * Cuts a byte stream into lines the way the child protocol frames them: a line ends at "\n" (0x0A)
 * and nowhere else. Not readline, which also ends lines at "\r", U+2028 and U+2029: those may sit
 * raw inside a JSON string, and cutting there tears one reply in two. Bytes are gathered per line
 * and decoded as UTF-8 once the line is whole, so a character split across chunks stays whole
 * (invalid UTF-8 becomes U+FFFD, as a decoding stream would make it). One "\r" right before the
 * "\n" is dropped, so a child that ends its lines "\r\n" is read the same: a raw "\r" can't be part
 * of a JSON value, and JSON counts it as whitespace anyway. A line never holds more than `maxBytes`
 * in memory: past that it is reported once and skipped. At the end of the stream, bytes after the
 * last "\n" count as a last line (a child may exit right after writing its reply without one).
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  /** Dropping the rest of an overlong line, up to its "\n". */
  private skipping = false;

  private readonly options: LineSplitterOptions;

  constructor(options: LineSplitterOptions) {
    this.options = options;
  }

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline === -1 ? chunk.length : newline;
      if (!this.skipping) this.gather(chunk.subarray(start, end));
      if (newline === -1) return;
      if (this.skipping) this.skipping = false;
      else this.emit(true);
      start = newline + 1;
    }
  }

  /** The stream is over: a last line without its "\n" still counts. */
  end(): void {
    if (!this.skipping && this.size > 0) this.emit(false);
    this.skipping = false;
  }

  private gather(bytes: Buffer): void {
    if (bytes.length === 0) return;
    const { maxBytes } = this.options;
    const max = typeof maxBytes === "number" ? maxBytes : maxBytes();
    if (this.size + bytes.length > max) {
      const head = Buffer.concat([...this.parts, bytes]).subarray(0, max);
      this.parts = [];
      this.size = 0;
      this.skipping = true;
      this.options.onOverlong(head, max);
      return;
    }
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  private emit(terminated: boolean): void {
    let line = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.size);
    this.parts = [];
    this.size = 0;
    if (terminated && line.at(-1) === CARRIAGE_RETURN) line = line.subarray(0, -1);
    this.options.onLine(line.toString("utf8"));
  }
}

/** Feeds a stream's bytes to a LineSplitter, ending it when the stream ends or closes. */
export function splitLines(stream: Readable, options: LineSplitterOptions): LineSplitter {
  const splitter = new LineSplitter(options);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    splitter.end();
  };
  stream.on("data", (chunk: Buffer | string) =>
    splitter.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)),
  );
  stream.on("end", end);
  stream.on("close", end);
  return splitter;
}
