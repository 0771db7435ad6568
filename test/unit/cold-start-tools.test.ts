import { describe, expect, it } from "vitest";
import { parseSubject } from "../../scripts/cold-start-ab.ts";
import { groupOf } from "../../scripts/cold-start-profile.ts";

/** The cold-start tools' parsing (scripts/cold-start-profile.ts, -modules.ts, -ab.ts); their figures are the bench's. */
describe("the cold-start profile's groups", () => {
  it("names a package by its node_modules folder, the external SDK apart", () => {
    expect(groupOf("/x/node_modules/zod/v4/core/core.js")).toBe("zod");
    expect(groupOf("file:///x/node_modules/@smithy/core/dist-es/index.js")).toBe("sdk @smithy/core");
    expect(groupOf("../main/node_modules/@aws-lambda-powertools/logger/lib/esm/Logger.js")).toBe(
      "@aws-lambda-powertools/logger",
    );
  });

  it("names skyforge's own code by its folder, the runtime's as node", () => {
    expect(groupOf("../../lib/store/job-fields.ts")).toBe("lib/store");
    expect(groupOf("lib/engine.ts")).toBe("lib");
    expect(groupOf("app/kinds/echo.ts")).toBe("app");
    expect(groupOf("node:internal/modules/esm/loader")).toBe("(node)");
    expect(groupOf("/x/node_modules/zod/v4/core/core.js", true)).toBe("zod/v4/core/core.js");
  });
});

describe("a compared start's subject", () => {
  it("is label=file, with one environment variable after @", () => {
    expect(parseSubject("before=a.mjs")).toEqual({ label: "before", file: "a.mjs", env: {} });
    expect(parseSubject("cached=/t/w.mjs@NODE_COMPILE_CACHE=/t/cc")).toEqual({
      label: "cached",
      file: "/t/w.mjs",
      env: { NODE_COMPILE_CACHE: "/t/cc" },
    });
    expect(() => parseSubject("a.mjs")).toThrow(/label=file/);
  });
});
