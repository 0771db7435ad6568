import { describe, expect, it } from "vitest";
import * as z from "zod";
import type { AnyKind } from "../../lib/job/kind.ts";
import { mcpKinds } from "../../mcp/kind-tools.ts";

/**
 * The MCP server's kinds (mcp/kind-tools.ts): a kind whose schema loads on first use is loaded for
 * its tool's input; one whose module fails is listed with any JSON and says why, beside the others.
 */
const kind = (name: string, fields: Partial<AnyKind>): AnyKind =>
  ({ name, queue: "default", maxAttempts: 1, timeoutSeconds: 1, ...fields }) as AnyKind;

describe("mcpKinds", () => {
  it("loads a lazily declared kind's schema, and lists a kind whose module fails with why", async () => {
    const listed = await mcpKinds({
      kinds: [
        kind("lazy", {
          load: async () => ({
            default: { payload: z.object({ word: z.string() }), handler: async () => 1 },
          }),
        }),
        kind("broken", {
          load: async () => {
            throw new Error("the module broke at import");
          },
        }),
        kind("whole", { payload: z.number(), handler: async () => 1, description: "a number" }),
      ],
      poolKinds: [{ name: "child", queue: "heavy" }],
    });
    expect(listed.map((k) => k.name)).toEqual(["lazy", "broken", "whole", "child"]);
    const [lazy, broken, whole] = listed;
    expect(lazy?.payload.safeParse({ word: "hi" }).success).toBe(true);
    expect(lazy?.payload.safeParse({ word: 1 }).success).toBe(false);
    expect(broken?.description).toMatch(
      /^kind "broken": its module .* failed to load: Error: the module broke/,
    );
    expect(broken?.payload.safeParse({ any: ["json"] }).success).toBe(true);
    expect(whole?.description).toBe("a number");
  });
});
