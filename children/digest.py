#!/usr/bin/env python3
r"""A skyforge pool child in Python: proof that the protocol is language-neutral.

It boots once (BOOT_DELAY_MS stands in for loading a model or a framework), then serves requests
forever: one JSON request per stdin line, one JSON reply per stdout line, logs on stderr. It exits
at EOF, and stops at once, even mid-job, when it finds its parent (the pool) gone.
Request: {"id","kind","attempt","payload"}. Payload: {"text": str, "rounds"?: int, "fail"?: str,
"throttle"?: seconds}. Reply: {"id","status":"ok","result"} | {"id","status":"error","message"}
| {"id","status":"throttled","retry_after_secs"}.
A batch kind's request carries a call's items of one key: {"id","kind","key","items":[{"id",
"attempt","payload"}...]}; its one reply line has one outcome per item id: {"id","items":[reply...]},
each ok result telling which call it was part of (batchId, batchSize, key, index).
Lines end at b"\n" and nowhere else (request_lines): a U+2028 in a payload is text, not a line's end.
"""
import hashlib
import json
import os
import platform
import sys
import threading
import time

# The longest request line the pool writes (lib/pool/child-protocol.ts MAX_LINE_BYTES: a batch call
# of many items; one job's line is at most 4 MiB). A longer one can't be a request.
MAX_LINE_BYTES = 256 * 1024 * 1024


class LineTooLong(Exception):
    pass


def request_lines(stream, max_bytes=MAX_LINE_BYTES):
    r"""The lines of a binary stream, split at b"\n" only and decoded as UTF-8, without their b"\n"
    or a b"\r" right before it; bytes after the last b"\n" at the end are a last line. Not str
    lines: str.splitlines() also ends lines at U+2028, U+2029 and other separators that may sit raw
    inside a JSON string. Raises LineTooLong, holding no more than max_bytes + 1, for a longer line."""
    while True:
        line = stream.readline(max_bytes + 1)
        if not line:
            return
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        elif len(line) > max_bytes:
            raise LineTooLong(f"a request line is over {max_bytes} bytes")
        yield line.decode("utf-8")


def boot():
    delay_ms = int(os.environ.get("BOOT_DELAY_MS", "0"))
    if delay_ms > 0:
        time.sleep(delay_ms / 1000)


def stop_when_orphaned():
    """The pool makes its children die with it where Linux has setpriv; elsewhere, or when a child is
    started some other way, a child whose pool died would compute on for nobody. A busy child doesn't
    read stdin, so it can't see EOF: it watches its parent pid instead (re-parented once the pool is gone)."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


def handle(payload):
    if not isinstance(payload, dict):
        return {"status": "error", "message": "payload must be an object"}
    if "fail" in payload:
        return {"status": "error", "message": str(payload["fail"])}
    if "throttle" in payload:
        return {"status": "throttled", "retry_after_secs": payload["throttle"]}
    rounds = int(payload.get("rounds", 1))
    if rounds < 1 or rounds > 10_000_000:
        return {"status": "error", "message": "rounds must be between 1 and 10000000"}
    digest = str(payload.get("text", "")).encode()
    for _ in range(rounds):
        digest = hashlib.sha256(digest).digest()
    result = {
        "sha256": digest.hex(),
        "rounds": rounds,
        "pid": os.getpid(),
        "runtime": "python " + platform.python_version(),
    }
    return {"status": "ok", "result": result}


def handle_safely(payload):
    try:
        return handle(payload)
    except Exception as err:  # the job fails, the child lives on
        return {"status": "error", "message": f"{type(err).__name__}: {err}"}


def serve_batch(request):
    items = request["items"]
    outcomes = []
    for index, item in enumerate(items):
        outcome = handle_safely(item.get("payload"))
        if outcome["status"] == "ok":
            outcome["result"].update(
                {"batchId": request["id"], "batchSize": len(items), "key": request.get("key"), "index": index}
            )
        outcome["id"] = item["id"]
        outcomes.append(outcome)
    print(f"digest call {request['id']} key {request.get('key')!r}: {len(items)} items", file=sys.stderr)
    return {"id": request["id"], "items": outcomes}


def serve(lines):
    for line in lines:
        if not line.strip():
            continue
        request = json.loads(line)
        if isinstance(request.get("items"), list):
            reply = serve_batch(request)
        else:
            reply = handle_safely(request.get("payload"))
            reply["id"] = request["id"]
            print(f"digest job {request['id']} attempt {request.get('attempt')}: {reply['status']}", file=sys.stderr)
        # json.dumps escapes every non-ASCII character (ensure_ascii): the line is ASCII, U+2028 too.
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def main():
    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    boot()
    try:
        serve(request_lines(sys.stdin.buffer))
    except LineTooLong as err:
        # A line that can't be a request: nothing to answer, the pool sees the child die.
        print(f"digest: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
