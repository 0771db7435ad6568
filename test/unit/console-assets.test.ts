import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
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

  it("serves @skyforge/client/realtime bundled for the page: one module, no import left, its two calls exported", async () => {
    const answer = await consoleAsset("GET", "/console/vendor/realtime.mjs");
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const text = answer.body.toString("utf8");
    expect(text).not.toMatch(/\bfrom\s*["']|\bimport\s*["']|\bimport\(/);
    expect(text).toMatch(/export\s*\{[^}]*\bsubscribe\b[^}]*\}/);
    expect(text).toMatch(/export\s*\{[^}]*\btailQueue\b[^}]*\}/);
  }, 60_000);

  it("allows exactly the import map index.html has inline, by the hash the browser computes", async () => {
    const html = readFileSync(new URL("../../console/index.html", import.meta.url), "utf8");
    // Every inline script of the page (those without src): the browser runs one only if the policy
    // names its hash, taken over the exact text between the tags.
    const inline: { tag: string; text: string }[] = [];
    for (let at = html.indexOf("<script"); at >= 0; at = html.indexOf("<script", at + 1)) {
      const tagEnd = html.indexOf(">", at) + 1;
      const tag = html.slice(at, tagEnd);
      if (!/\ssrc=/.test(tag))
        inline.push({ tag, text: html.slice(tagEnd, html.indexOf("</script>", tagEnd)) });
    }
    // The import map is the only one (any other would be blocked).
    expect(inline.map((s) => /\stype="importmap"/.test(s.tag))).toEqual([true]);
    const importMap = inline[0]?.text ?? "";
    const imports = (JSON.parse(importMap) as { imports: Record<string, string> }).imports;
    expect(Object.values(imports).filter((url) => !consoleAssets().has(url))).toEqual([]);

    const expected = `'sha256-${createHash("sha256").update(importMap, "utf8").digest("base64")}'`;
    const policy = (await consoleAsset("GET", "/console/")).headers["content-security-policy"] ?? "";
    const scriptSrc = policy.split("; ").find((d) => d.startsWith("script-src "));
    expect(scriptSrc).toBe(`script-src 'self' ${expected}`);
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
