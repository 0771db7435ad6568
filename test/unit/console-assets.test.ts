import { existsSync, readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { consoleAsset, consoleAssets } from "../../console/assets.ts";

/** The console's allow-list (console/assets.ts): every URL names a file that exists, and no console file is left out. */
describe("console assets", () => {
  it("lists only files that exist, and every browser file of console/", () => {
    const files = [...consoleAssets().values()];
    expect(files.filter((f) => !existsSync(f))).toEqual([]);
    const browserFiles = readdirSync(new URL("../../console/", import.meta.url)).filter((f) =>
      /\.(js|css|html)$/.test(f),
    );
    const served = new Set(files.map((f) => f.split("/").at(-1)));
    expect(browserFiles.filter((f) => !served.has(f))).toEqual([]);
    expect(files.some((f) => f.endsWith(".ts"))).toBe(false);
  });

  it("answers with each file's content type, and a security policy that allows the page's import map", async () => {
    const page = await consoleAsset("GET", "/console/");
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.headers["content-security-policy"]).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*'/);
    expect((await consoleAsset("GET", "/console/vendor/preact.mjs")).headers["content-type"]).toBe(
      "text/javascript; charset=utf-8",
    );
    expect((await consoleAsset("HEAD", "/console/style.css")).headers["content-type"]).toBe(
      "text/css; charset=utf-8",
    );
  });

  it("finds nothing outside the list, however the path is spelled", async () => {
    for (const path of [
      "/console/../package.json",
      "/console/%2e%2e/package.json",
      "/console/vendor/../../package.json",
      "/console/assets.ts",
      "/console/vendor",
      "/console/APP.JS",
      "/console/app.js/",
      "/console/app.js%00",
    ]) {
      const answer = await consoleAsset("GET", path);
      expect([path, answer.status]).toEqual([path, 404]);
      expect(JSON.parse(answer.body.toString()).error.code).toBe("not_found");
    }
    const put = await consoleAsset("PUT", "/console/app.js");
    expect([put.status, put.headers.allow]).toEqual([405, "GET, HEAD"]);
  });
});
