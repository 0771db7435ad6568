import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import { cacheDynaliteConditionParses, dynaliteConditionParser } from "../../local/dynalite-parse-cache.ts";

/**
 * The kept parses against dynalite's own: the same request through dynalite's expression
 * validation (its exported `validateExpressions`, which every item operation calls) once with the
 * parser as dynalite ships it and once with the cache, compared whole: the error, and the parsed
 * condition each request carries on to evaluation.
 */
const validations = createRequire(import.meta.url)("dynalite/validations/index.js") as {
  validateExpressions(data: Request): string | undefined;
};

interface Request {
  ConditionExpression?: string;
  KeyConditionExpression?: string;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, Record<string, unknown>>;
  [parsed: string]: unknown;
}

const cache = cacheDynaliteConditionParses();
const parser = dynaliteConditionParser();

/** The request validated by dynalite's own parser and through the cache: each one's error and request after. */
function validateBoth(request: Request) {
  const cachedParse = parser.parse;
  const own = structuredClone(request);
  parser.parse = cache.uncached;
  let ownError: string | undefined;
  try {
    ownError = validations.validateExpressions(own);
  } finally {
    parser.parse = cachedParse;
  }
  const kept = structuredClone(request);
  const keptError = validations.validateExpressions(kept);
  return { own, ownError, kept, keptError };
}

function expectSame(request: Request): { error: string | undefined; parsed: Request } {
  const { own, ownError, kept, keptError } = validateBoth(request);
  expect(keptError).toBe(ownError);
  expect(isDeepStrictEqual(kept, own), JSON.stringify({ kept, own })).toBe(true);
  return { error: keptError, parsed: kept };
}

const s = (value: string) => ({ S: value });
const n = (value: string) => ({ N: value });

describe("dynalite's condition parses, kept", () => {
  it("answers a repeated expression from the kept parse, with the request's own values in it", () => {
    const request = (status: string): Request => ({
      ConditionExpression: "attribute_exists(#s) AND #s = :st AND #a < :max",
      ExpressionAttributeNames: { "#s": "status", "#a": "attempt" },
      ExpressionAttributeValues: { ":st": s(status), ":max": n("3") },
    });
    const hitsBefore = cache.stats.hits;
    expectSame(request("queued"));
    const { error, parsed } = expectSame(request("running"));
    expect(error).toBeUndefined();
    expect(cache.stats.hits).toBeGreaterThan(hitsBefore);
    expect(JSON.stringify(parsed._condition)).toContain('"running"');
    expect(JSON.stringify(parsed._condition)).not.toContain('"queued"');
  });

  it("gives each request a parse of its own: changing one doesn't reach the next", () => {
    const request: Request = {
      ConditionExpression: "#x = :v",
      ExpressionAttributeNames: { "#x": "x" },
      ExpressionAttributeValues: { ":v": s("a") },
    };
    const first = expectSame(request).parsed;
    (first._condition as { expression: { type: string } }).expression.type = "changed";
    expectSame(request);
  });

  it("keys on each value's type: the same expression with a value of another type gets its own error", () => {
    const request = (prefix: Record<string, unknown>): Request => ({
      ConditionExpression: "begins_with(#k, :p)",
      ExpressionAttributeNames: { "#k": "key" },
      ExpressionAttributeValues: { ":p": prefix },
    });
    expect(expectSame(request(s("ab"))).error).toBeUndefined();
    expect(expectSame(request(n("1"))).error).toMatch(/Incorrect operand type/);
    expect(expectSame(request({ L: [] })).error).toMatch(/Incorrect operand type/);
  });

  it("keys on the names: another name map parses again", () => {
    const request = (names: Record<string, string>): Request => ({
      ConditionExpression: "#a = :v",
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ":v": s("1") },
    });
    expect(expectSame(request({ "#a": "one" })).error).toBeUndefined();
    expect(JSON.stringify(expectSame(request({ "#a": "two" })).parsed._condition)).toContain('"two"');
    expect(expectSame(request({ "#b": "one" })).error).toMatch(
      /attribute name used in the document path is not defined/,
    );
  });

  it("leaves every error class as dynalite gives it", () => {
    const errors: Request[] = [
      {
        ConditionExpression: "((#a = :v))",
        ExpressionAttributeNames: { "#a": "a" },
        ExpressionAttributeValues: { ":v": s("1") },
      },
      { ConditionExpression: "status = :v", ExpressionAttributeValues: { ":v": s("1") } },
      {
        ConditionExpression: "#a = = :v",
        ExpressionAttributeNames: { "#a": "a" },
        ExpressionAttributeValues: { ":v": s("1") },
      },
      {
        ConditionExpression: "#a = :v",
        ExpressionAttributeNames: { "#a": "a" },
        ExpressionAttributeValues: { ":v": s("1"), ":w": s("2") },
      },
      {
        ConditionExpression: "#a = :v",
        ExpressionAttributeNames: { "#a": "a", "#z": "z" },
        ExpressionAttributeValues: { ":v": s("1") },
      },
      { ConditionExpression: "nope(#a)", ExpressionAttributeNames: { "#a": "a" } },
      { ConditionExpression: "#a = #a", ExpressionAttributeNames: { "#a": "a" } },
      { ConditionExpression: "size(#a)", ExpressionAttributeNames: { "#a": "a" } },
    ];
    for (const request of errors) {
      // Twice: a kept parse (there is none for an error) must not turn the second into a success.
      expect(expectSame(request).error, request.ConditionExpression).toBeTruthy();
      expect(expectSame(request).error).toBeTruthy();
    }
  });

  it("parses BETWEEN and attribute_type as before, never kept: they read a value's content", () => {
    const passedBefore = cache.stats.passedThrough;
    const between = (low: string, high: string): Request => ({
      ConditionExpression: "#a BETWEEN :lo AND :hi",
      ExpressionAttributeNames: { "#a": "a" },
      ExpressionAttributeValues: { ":lo": n(low), ":hi": n(high) },
    });
    expect(expectSame(between("1", "2")).error).toBeUndefined();
    expect(expectSame(between("3", "2")).error).toMatch(/upper bound to be greater/);
    const typed = (type: string): Request => ({
      ConditionExpression: "attribute_type(#a, :t)",
      ExpressionAttributeNames: { "#a": "a" },
      ExpressionAttributeValues: { ":t": s(type) },
    });
    expect(expectSame(typed("N")).error).toBeUndefined();
    expect(expectSame(typed("X")).error).toMatch(/Invalid attribute type name/);
    expect(cache.stats.passedThrough).toBe(passedBefore + 4);
  });

  it("handles paths, lists, IN, size, key conditions and an update beside a condition", () => {
    const requests: Request[] = [
      {
        ConditionExpression: "size(#l) > :n AND #m.#k[0] IN (:a, :b) OR NOT contains(#l, :a)",
        ExpressionAttributeNames: { "#l": "list", "#m": "map", "#k": "key" },
        ExpressionAttributeValues: { ":n": n("2"), ":a": s("x"), ":b": s("y") },
      },
      {
        KeyConditionExpression: "#pk = :pk AND begins_with(#sk, :pre)",
        ExpressionAttributeNames: { "#pk": "pk", "#sk": "sk" },
        ExpressionAttributeValues: { ":pk": s("job#1"), ":pre": s("step#") },
      },
      {
        UpdateExpression: "SET #s = :st, #h = list_append(#h, :e)",
        ConditionExpression: "#s IN (:q, :r) AND attribute_not_exists(#o)",
        ExpressionAttributeNames: { "#s": "status", "#h": "history", "#o": "owner" },
        ExpressionAttributeValues: {
          ":st": s("done"),
          ":e": { L: [s("x")] },
          ":q": s("queued"),
          ":r": s("running"),
        },
      },
    ];
    for (const request of requests) {
      expect(expectSame(request).error).toBeUndefined();
      expect(expectSame(request).error).toBeUndefined();
    }
  });
});
