import { describe, expect, test } from "vitest";
import {
  attributeMissing,
  cancelNotRequested,
  isDue,
  itemMissing,
  leaseExpired,
  leaseHeldBy,
  statusIn,
  statusIs,
} from "../../lib/store/conditions.ts";
import { and, Expr, or, Update } from "../../lib/store/expression.ts";

/** What is left of an expression once every placeholder is removed: only DynamoDB syntax may remain. */
function bareWords(expression: string): string[] {
  return expression
    .replace(/#[A-Za-z0-9_]+/g, " ")
    .replace(/:v\d+/g, " ")
    .split(/[^A-Za-z_]+/)
    .filter(Boolean);
}
const syntax = new Set(["AND", "OR", "IN", "SET", "REMOVE", "attribute_not_exists", "if_not_exists"]);

describe("Expr", () => {
  test("names go through #placeholders and are recorded once", () => {
    const e = new Expr();
    expect(e.name("status")).toBe("#status");
    expect(e.name("status")).toBe("#status");
    expect(e.names).toEqual({ "#status": "status" });
  });

  test("a map entry's key of any text gets a numbered placeholder of its own", () => {
    const e = new Expr();
    const path = e.entry("steps", "send welcome.v2-#1");
    expect(path).toMatch(/^#steps\.#_k\d+$/);
    const placeholder = path.split(".")[1] as string;
    expect(e.names[placeholder]).toBe("send welcome.v2-#1");
    const u = new Update(e).setEntry("steps", "a b", "1", "v");
    expect(u.toString()).toMatch(/^SET #steps\.#_k\d+\.#v = :v\d+$/);
  });

  test("every value gets its own placeholder, even equal values", () => {
    const e = new Expr();
    const a = e.value("queued");
    const b = e.value("queued");
    const c = e.value(5);
    expect(new Set([a, b, c]).size).toBe(3);
    expect(e.values).toEqual({ [a]: "queued", [b]: "queued", [c]: 5 });
  });

  test("params omits empty maps (DynamoDB rejects them)", () => {
    expect(new Expr().params()).toEqual({});
    const e = new Expr();
    e.name("pk");
    expect(e.params()).toEqual({ ExpressionAttributeNames: { "#pk": "pk" } });
  });
});

describe("condition fragments", () => {
  test("statusIs / statusIn always address the reserved word `status` via #status", () => {
    const e = new Expr();
    const text = and(statusIs("running"), statusIn("queued", "scheduled"))(e);
    expect(text).toMatch(/^\(#status = :v0\) AND \(#status IN \(:v1, :v2\)\)$/);
    expect(e.names).toEqual({ "#status": "status" });
    expect(e.values).toEqual({ ":v0": "running", ":v1": "queued", ":v2": "scheduled" });
    expect(bareWords(text)).not.toContain("status");
  });

  test("a claim-shaped condition composes with parentheses and no bare attribute names", () => {
    const e = new Expr();
    const now = 1_700_000_000_000;
    const text = or(
      itemMissing,
      and(statusIn("queued", "scheduled"), isDue(now)),
      and(statusIs("running"), leaseExpired(now)),
    )(e);
    expect(text).toBe(
      "(attribute_not_exists(#pk)) OR ((#status IN (:v0, :v1)) AND (#runAt <= :v2)) OR ((#status = :v3) AND (#leaseUntil < :v4))",
    );
    expect(e.values[":v2"]).toBe(now);
    expect(e.values[":v4"]).toBe(now);
    for (const w of bareWords(text)) expect(syntax).toContain(w);
    // every placeholder used is defined, and every defined one is used
    for (const p of text.match(/[#:][A-Za-z0-9_]+/g) ?? [])
      expect({ ...e.names, ...e.values }).toHaveProperty([p]);
    for (const p of [...Object.keys(e.names), ...Object.keys(e.values)]) expect(text).toContain(p);
  });

  test("fence and cancel fragments", () => {
    const e = new Expr();
    const text = and(leaseHeldBy("tok"), cancelNotRequested, attributeMissing("x"))(e);
    expect(text).toBe(
      "(#leaseToken = :v0) AND (attribute_not_exists(#cancelRequested)) AND (attribute_not_exists(#x))",
    );
    expect(e.values).toEqual({ ":v0": "tok" });
  });
});

describe("Update", () => {
  test("builds SET and REMOVE clauses sharing the Expr with the condition", () => {
    const e = new Expr();
    const u = new Update(e)
      .set("status", "running")
      .increment("attempts", 1)
      .setIfAbsent("kind", "echo")
      .copy("claimedFrom", "status", "missing")
      .remove("gsi1pk", "gsi1sk");
    const cond = statusIs("queued")(e);
    expect(u.toString()).toBe(
      "SET #status = :v0, #attempts = if_not_exists(#attempts, :v1) + :v2, #kind = if_not_exists(#kind, :v3), " +
        "#claimedFrom = if_not_exists(#status, :v4) REMOVE #gsi1pk, #gsi1sk",
    );
    expect(cond).toBe("#status = :v5");
    expect(e.values).toEqual({
      ":v0": "running",
      ":v1": 0,
      ":v2": 1,
      ":v3": "echo",
      ":v4": "missing",
      ":v5": "queued",
    });
    for (const w of bareWords(u.toString())) expect(syntax).toContain(w);
  });

  test("setAll sets each entry; an update with only removes has no SET", () => {
    const e = new Expr();
    expect(new Update(e).setAll({ a: 1, b: "two" }).toString()).toBe("SET #a = :v0, #b = :v1");
    expect(new Update(new Expr()).remove("leaseToken").toString()).toBe("REMOVE #leaseToken");
    expect(new Update(new Expr()).toString()).toBe("");
  });
});
