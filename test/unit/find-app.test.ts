import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { appsInSstConfig, findAppModule } from "../../project/find-app.ts";

/** `skyforge dev`'s search for the app module (project/find-app.ts): --app, sst.config.ts, the defaults. */
describe("appsInSstConfig", () => {
  it("reads the app string of new Skyforge(...), whatever comes before it in the options", () => {
    const config = `export default $config({
  async run() {
    const { Skyforge } = await import("skyforge/sst");
    const jobs = new Skyforge("Jobs", {
      alarms: { email: "ops@example.com" }, // "app" in a comment: app: "nope.ts"
      app: 'src/jobs/app.ts',
    });
  },
});`;
    expect(appsInSstConfig(config)).toEqual({ kind: "named", app: "src/jobs/app.ts" });
  });

  it("skips a commented-out component and a string that only looks like one", () => {
    const config = `// new Skyforge("Old", { app: "old.ts" })
/* new Skyforge("Older", { app: "older.ts" }) */
const note = "new Skyforge('Quoted', { app: 'quoted.ts' })";
new Skyforge("Jobs", { app: \`jobs.ts\` });`;
    expect(appsInSstConfig(config)).toEqual({ kind: "named", app: "jobs.ts" });
  });

  it("two components naming two apps, or an app given by an expression, are ambiguous", () => {
    expect(
      appsInSstConfig(`new Skyforge("A", { app: "a.ts" }); new Skyforge("B", { app: "b.ts" });`),
    ).toEqual({ kind: "ambiguous", detail: "apps a.ts, b.ts" });
    expect(appsInSstConfig(`new Skyforge("A", { app: path.join("src", "app.ts") });`)).toMatchObject({
      kind: "ambiguous",
    });
    expect(appsInSstConfig(`new Skyforge("A", { app: \`\${root}/app.ts\` });`)).toMatchObject({
      kind: "ambiguous",
    });
    // Two components over the same app are one app.
    expect(
      appsInSstConfig(`new Skyforge("A", { app: "a.ts" }); new Skyforge("B", { app: "a.ts" });`),
    ).toEqual({
      kind: "named",
      app: "a.ts",
    });
  });

  it("a config without a Skyforge component names none", () => {
    expect(appsInSstConfig(`new sst.aws.Function("Web", { handler: "app.handler" });`)).toEqual({
      kind: "none",
    });
  });
});

describe("findAppModule", () => {
  const root = mkdtempSync(join(tmpdir(), "find-app-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const file = (path: string, text = "") => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  };

  it("finds, in order: --app, sst.config.ts's app (from a subfolder too), then the defaults", () => {
    file("skyforge.app.ts");
    expect(findAppModule(root)).toMatchObject({
      found: true,
      file: join(root, "skyforge.app.ts"),
      from: "default",
    });
    file("src/jobs/app.ts");
    expect(findAppModule(root)).toMatchObject({ found: true, file: join(root, "src/jobs/app.ts") });

    file("sst.config.ts", `new Skyforge("Jobs", { app: "jobs/main.ts" });`);
    expect(findAppModule(root)).toMatchObject({
      found: false,
      reason: expect.stringMatching(/jobs\/main\.ts/),
    });
    file("jobs/main.ts");
    file("web/deep/page.ts");
    expect(findAppModule(join(root, "web/deep"))).toEqual({
      found: true,
      file: join(root, "jobs/main.ts"),
      from: "sst.config.ts",
      projectDir: root,
    });

    expect(findAppModule(join(root, "web"), "deep/page.ts")).toMatchObject({
      found: true,
      file: join(root, "web/deep/page.ts"),
      from: "--app",
    });
    expect(findAppModule(root, "missing.ts")).toMatchObject({
      found: false,
      reason: "--app missing.ts: no such file",
    });
  });

  it("nothing found says where it looked", () => {
    const empty = join(root, "empty");
    mkdirSync(empty);
    const found = findAppModule(empty);
    // root holds an sst.config.ts above empty/: its app is what counts there.
    expect(found.found).toBe(true);
    const alone = mkdtempSync(join(tmpdir(), "find-app-none-"));
    try {
      expect(findAppModule(alone)).toEqual({
        found: false,
        reason: "no app module (looked at no sst.config.ts, src/jobs/app.ts, skyforge.app.ts)",
        projectDir: alone,
      });
    } finally {
      rmSync(alone, { recursive: true, force: true });
    }
  });
});
