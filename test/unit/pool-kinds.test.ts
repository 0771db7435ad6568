import { describe, expect, test } from "vitest";
import { app } from "../../app/index.ts";
import {
  loadPoolKinds,
  PoolConfigError,
  parsePoolConfig,
  resolvePoolKinds,
} from "../../lib/declarations/pool-config.ts";
import { ClientError } from "../../lib/errors.ts";
import { poolKindDefinition } from "../../lib/pool/reserved-child.ts";
import { validateEnqueue } from "../../lib/producer/validate.ts";
import { testRegistry } from "../support/test-app.ts";

const { queues } = app;

const resolve = (file: unknown) =>
  resolvePoolKinds(queues, app.poolKinds, parsePoolConfig(JSON.stringify(file), "pool.json"));
const problem = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(PoolConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a PoolConfigError");
};

describe("pool kinds are data", () => {
  test("the declared kinds feed from the pool-tier queue with soft ≤ hard", () => {
    const kinds = resolvePoolKinds(queues, app.poolKinds);
    expect(kinds.map((k) => k.name)).toEqual(["py-digest", "node-digest", "py-digest-batch"]);
    for (const k of kinds) {
      expect(k.queue).toBe("heavy");
      expect(k.soft).toBeLessThanOrEqual(k.hard);
    }
  });

  test("the operator's file overrides a declared kind field by field and adds a new one", () => {
    const kinds = resolve({
      kinds: {
        "py-digest": { soft: 1, hard: 8, env: { MODEL: "small" } },
        "rb-render": { argv: ["ruby", "render.rb"], cwd: "/srv/render", timeoutSeconds: 60 },
      },
    });
    const py = kinds.find((k) => k.name === "py-digest");
    expect(py).toMatchObject({
      argv: ["python3", "children/digest.py"],
      soft: 1,
      hard: 8,
      env: { MODEL: "small" },
    });
    const rb = kinds.find((k) => k.name === "rb-render");
    expect(rb).toMatchObject({
      argv: ["ruby", "render.rb"],
      cwd: "/srv/render",
      timeoutSeconds: 60,
      queue: "heavy",
      soft: 2,
      hard: 4,
    });
  });

  test('the file may make a kind pause when its attempts run out (onExhausted "pause"), and nothing else', () => {
    const py = resolve({ kinds: { "py-digest": { onExhausted: "pause" } } }).find(
      (k) => k.name === "py-digest",
    );
    expect(py?.onExhausted).toBe("pause");
    // The registry's kind carries it, which is what the run's settlement reads.
    expect(poolKindDefinition(py as NonNullable<typeof py>).onExhausted).toBe("pause");
    expect(problem(() => resolve({ kinds: { "py-digest": { onExhausted: "park" } } }))).toMatch(
      /kinds\.py-digest\.onExhausted/,
    );
  });

  test("a file overrides a batch kind's other fields and keeps its batch; it can't declare one", () => {
    const batch = resolve({ kinds: { "py-digest-batch": { soft: 3, hard: 3 } } }).find(
      (k) => k.name === "py-digest-batch",
    );
    expect(batch).toMatchObject({ soft: 3, batch: { maxSize: 20, policy: "duration" } });
    expect(batch?.batch?.key({ key: "acct-1" })).toBe("acct-1");
    expect(
      problem(() => parsePoolConfig(JSON.stringify({ kinds: { "py-digest": { batch: { maxSize: 5 } } } }))),
    ).toMatch(/kinds\.py-digest.*batch/);
  });

  test("a bad file is refused with a message naming the file and every problem", () => {
    expect(problem(() => parsePoolConfig("{not json", "/etc/pool.json"))).toMatch(
      /^\/etc\/pool\.json: not JSON/,
    );
    const msg = problem(() =>
      parsePoolConfig(JSON.stringify({ kinds: { x: { argv: [], soft: 0 } } }), "p.json"),
    );
    expect(msg).toContain("kinds.x.argv: argv needs at least the program to run");
    expect(msg).toContain("kinds.x.soft");
    expect(problem(() => parsePoolConfig(JSON.stringify({ kinds: {}, extra: 1 }), "p.json"))).toMatch(
      /extra/,
    );
    expect(problem(() => parsePoolConfig(JSON.stringify({ kinds: { Bad_Name: { argv: ["x"] } } })))).toMatch(
      /kind names are lowercase/,
    );
  });

  test("a kind must be runnable: argv for a new kind, a pool-tier queue, soft ≤ hard", () => {
    expect(problem(() => resolve({ kinds: { fresh: { soft: 1 } } }))).toContain(
      "fresh: a new kind needs argv",
    );
    expect(problem(() => resolve({ kinds: { x: { argv: ["x"], queue: "default" } } }))).toContain(
      'x: queue "default" is served by Lambda, not the pool',
    );
    expect(problem(() => resolve({ kinds: { x: { argv: ["x"], queue: "nope" } } }))).toContain(
      'x: queue "nope" is not declared',
    );
    expect(problem(() => resolve({ kinds: { "py-digest": { soft: 5, hard: 2 } } }))).toContain(
      "py-digest: soft (5) is above hard (2)",
    );
  });
});

describe("producers route pool kinds to pool queues only", () => {
  const registry = testRegistry();
  const refusal = (raw: unknown) => {
    try {
      validateEnqueue(raw, registry, queues);
    } catch (err) {
      expect(err).toBeInstanceOf(ClientError);
      return err as ClientError;
    }
    throw new Error("expected a ClientError");
  };

  test("a pool kind goes to its heavy queue and takes any JSON payload", () => {
    const v = validateEnqueue({ kind: "py-digest", payload: { text: "x", rounds: 3 } }, registry, queues);
    expect(v.queue.name).toBe("heavy");
    expect(v.kind.timeoutSeconds).toBe(300);
  });

  test("a pool kind on a Lambda queue, or a Lambda kind on the pool queue, is a 400", () => {
    const a = refusal({ kind: "py-digest", queue: "default", payload: {} });
    expect(a.httpStatus).toBe(400);
    expect(a.message).toBe(
      'kind "py-digest" runs on the pool tier, but queue "default" is served by the lambda tier',
    );
    const b = refusal({ kind: "echo", queue: "heavy", payload: {} });
    expect(b.httpStatus).toBe(400);
    expect(b.issues).toEqual([{ path: "queue", message: 'use a lambda-tier queue such as "default"' }]);
  });
});

describe("the operator's file, loaded as a deployment does", () => {
  const load = (text: string | Error) =>
    loadPoolKinds(queues, app.poolKinds, "children/pool.json", () => {
      if (text instanceof Error) throw text;
      return text;
    });

  test("every problem, of the file's form and of the kinds it makes, in one error that names the file", () => {
    const file = JSON.stringify({
      kinds: {
        "rb-size": { argv: ["ruby", "size.rb"], soft: "two" },
        "Bad Name": { argv: ["x"] },
        "py-digest": { queue: "default" },
        "no-argv": { soft: 1 },
      },
    });
    expect(() => load(file)).toThrow(PoolConfigError);
    const message = problem(() => load(file));
    expect(message).toMatch(/^children\/pool\.json: 4 problem\(s\): /);
    expect(message).toContain("kinds.rb-size.soft:");
    expect(message).toContain("kinds.Bad Name: kind names are lowercase letters, digits and dashes");
    expect(message).toContain('py-digest: queue "default" is served by Lambda, not the pool');
    expect(message).toContain("no-argv: a new kind needs argv");
  });

  test("a file that can't be read is named", () => {
    expect(problem(() => load(new Error("ENOENT: no such file")))).toBe(
      "children/pool.json: cannot be read (ENOENT: no such file)",
    );
  });
});
