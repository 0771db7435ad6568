import { describe, expect, it } from "vitest";
import { app } from "../../app/index.ts";
import { defineApp } from "../../lib/declarations/define-app.ts";
import {
  DEFAULT_LOOKBACK_SECONDS,
  defineEvent,
  lookbackOf,
  MAX_LOOKBACK_SECONDS,
} from "../../lib/declarations/event-declaration.ts";
import { DeclarationError } from "../../lib/declarations/validate-app.ts";
import { UsageError } from "../../lib/errors.ts";

describe("an app's event declarations (their lookbacks)", () => {
  it("a lookback over 24 h is a UsageError naming the call, at definition", () => {
    expect(() => defineEvent({ name: "order.paid", lookbackSeconds: MAX_LOOKBACK_SECONDS + 1 })).toThrow(
      UsageError,
    );
    expect(() => defineEvent({ name: "order.paid", lookbackSeconds: 86_401 })).toThrow(
      'defineEvent("order.paid"): lookbackSeconds 86401 is outside 0..86400 (24 h)',
    );
    expect(() => defineEvent({ name: "x", lookbackSeconds: -1 })).toThrow(UsageError);
    expect(defineEvent({ name: "order.paid", lookbackSeconds: MAX_LOOKBACK_SECONDS }).lookbackSeconds).toBe(
      86_400,
    );
  });

  it("defineApp refuses one built without defineEvent, and a name declared twice", () => {
    const events = [
      { name: "a", lookbackSeconds: 90_000 },
      { name: "b", lookbackSeconds: 60 },
      { name: "b" },
    ];
    expect(() => defineApp({ ...app, events })).toThrow(DeclarationError);
    expect(() => defineApp({ ...app, events })).toThrow(/defineEvent\("a"\): lookbackSeconds 90000/);
    expect(() => defineApp({ ...app, events })).toThrow(/event "b" is declared twice/);
  });

  it("an undeclared name keeps 5 minutes; a declared one its own", () => {
    const of = lookbackOf([
      defineEvent({ name: "slow", lookbackSeconds: 3600 }),
      { name: "none", lookbackSeconds: 0 },
    ]);
    expect(of("slow")).toBe(3600);
    expect(of("none")).toBe(0);
    expect(of("other")).toBe(DEFAULT_LOOKBACK_SECONDS);
  });
});
