// A skyforge pool child in Node: the same protocol (batch requests too) and payload as children/digest.py.
// It boots once (BOOT_DELAY_MS stands in for loading a framework), then answers one JSON line per
// request line on stdout and logs on stderr. Plain JavaScript, so any Node version runs it.
// It exits at EOF, and stops at once, even mid-job, when it finds its parent (the pool) gone.
// Lines end at "\n" only (protocol-lines.mjs): a U+2028 in a payload is text, not a line's end.
import { createHash } from "node:crypto";
import { LineTooLongError, readLines } from "./protocol-lines.mjs";

// The pool makes its children die with it where Linux has setpriv; elsewhere, or when a child is
// started some other way, a child whose pool died would compute on for nobody. A busy child doesn't
// read stdin, so it can't see EOF: it watches its parent pid (re-parented once the pool is gone),
// on a timer while idle and every few thousand rounds while it computes.
const parent = process.ppid;
const stopIfOrphaned = () => {
  if (process.ppid !== parent) process.exit(0);
};
setInterval(stopIfOrphaned, 200).unref();

const bootDelayMs = Number(process.env.BOOT_DELAY_MS ?? 0);
if (bootDelayMs > 0) await new Promise((r) => setTimeout(r, bootDelayMs));

function handle(payload) {
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
    return { status: "error", message: "payload must be an object" };
  }
  if ("fail" in payload) return { status: "error", message: String(payload.fail) };
  if ("throttle" in payload) return { status: "throttled", retry_after_secs: payload.throttle };
  const rounds = Number(payload.rounds ?? 1);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 10_000_000) {
    return { status: "error", message: "rounds must be between 1 and 10000000" };
  }
  let digest = Buffer.from(String(payload.text ?? ""));
  for (let i = 0; i < rounds; i++) {
    if (i % 4096 === 0) stopIfOrphaned();
    digest = createHash("sha256").update(digest).digest();
  }
  const result = { sha256: digest.toString("hex"), rounds, pid: process.pid, runtime: `node ${process.version}` };
  return { status: "ok", result };
}

function handleSafely(payload) {
  try {
    return handle(payload);
  } catch (err) {
    return { status: "error", message: String(err) };
  }
}

// A batch kind's request: a call's items of one key; one reply line with an outcome per item id.
function serveBatch({ id, key, items }) {
  const outcomes = items.map((item, index) => {
    const outcome = handleSafely(item.payload);
    if (outcome.status === "ok") Object.assign(outcome.result, { batchId: id, batchSize: items.length, key, index });
    return { id: item.id, ...outcome };
  });
  process.stderr.write(`digest call ${id} key ${JSON.stringify(key)}: ${items.length} items\n`);
  return { id, items: outcomes };
}

try {
  for await (const line of readLines(process.stdin)) {
    if (!line.trim()) continue;
    const request = JSON.parse(line);
    if (Array.isArray(request.items)) {
      process.stdout.write(`${JSON.stringify(serveBatch(request))}\n`);
      continue;
    }
    const reply = handleSafely(request.payload);
    process.stderr.write(`digest job ${request.id} attempt ${request.attempt}: ${reply.status}\n`);
    process.stdout.write(`${JSON.stringify({ id: request.id, ...reply })}\n`);
  }
} catch (err) {
  // A line that can't be a request: nothing to answer, the pool sees the child die.
  if (!(err instanceof LineTooLongError)) throw err;
  process.stderr.write(`digest: ${err.message}\n`);
  process.exit(2);
}
