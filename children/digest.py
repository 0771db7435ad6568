#!/usr/bin/env python3
"""A skyforge pool child in Python: proof that the protocol is language-neutral.

It boots once (BOOT_DELAY_MS stands in for loading a model or a framework), then serves requests
forever: one JSON request per stdin line, one JSON reply per stdout line, logs on stderr. It exits
at EOF, and stops at once, even mid-job, when it finds its parent (the pool) gone.
Request: {"id","kind","attempt","payload"}. Payload: {"text": str, "rounds"?: int, "fail"?: str,
"throttle"?: seconds}. Reply: {"id","status":"ok","result"} | {"id","status":"error","message"}
| {"id","status":"throttled","retry_after_secs"}.
"""
import hashlib
import json
import os
import platform
import sys
import threading
import time


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


def main():
    threading.Thread(target=stop_when_orphaned, daemon=True).start()
    boot()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        try:
            reply = handle(request.get("payload"))
        except Exception as err:  # the job fails, the child lives on
            reply = {"status": "error", "message": f"{type(err).__name__}: {err}"}
        reply["id"] = request["id"]
        print(f"digest job {request['id']} attempt {request.get('attempt')}: {reply['status']}", file=sys.stderr)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
