import { Logger } from "@aws-lambda-powertools/logger";
import { describe, expect, it, vi } from "vitest";
import { errorFields } from "../../lib/observability/log.ts";

describe("errorFields: a logged error keeps its stack", () => {
  it("the Powertools Logger writes an Error's name, message and stack", () => {
    const logger = new Logger({ serviceName: "error-fields-test" });
    // The Logger writes through its own Console instance: listen there, not on the global console.
    const out = (logger as unknown as { console: Console }).console;
    const lines: string[] = [];
    const spy = vi.spyOn(out, "error").mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
    try {
      logger.error("it failed", { queue: "q", ...errorFields(new TypeError("boom")) });
    } finally {
      spy.mockRestore();
    }
    const line = JSON.parse(lines.join("")) as { queue: string; error: Record<string, unknown> };
    expect(line.queue).toBe("q");
    expect(line.error).toMatchObject({ name: "TypeError", message: "boom" });
    expect(String(line.error.stack)).toMatch(/^TypeError: boom\n\s+at /);
  });

  it("anything else that was thrown is logged as its string", () => {
    expect(errorFields("a plain string")).toEqual({ error: "a plain string" });
    expect(errorFields(42)).toEqual({ error: "42" });
  });
});
