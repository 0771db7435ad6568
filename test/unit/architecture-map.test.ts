import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { docBlocks } from "../support/doc-blocks.ts";
import { projectRoot } from "../support/project-copy.ts";

/**
 * docs/architecture.md opens with a map of the rooms and the calls the pipeline makes on them. A
 * picture can't be run, but it can't drift: every room it lists has its folder, its service
 * interface and its property on the Engine, and every `room.call` it names is a method of that
 * service.
 */
const read = (path: string) => readFileSync(join(projectRoot, path), "utf8");
const map =
  docBlocks("docs/architecture.md").find((b) => b.marker?.includes("a map of the rooms"))?.text ?? "";
const rooms = [...map.matchAll(/^ {3}lib\/(\w+)\/\s+(\w+Service)\s/gm)].map((m) => ({
  folder: m[1] ?? "",
  service: m[2] ?? "",
}));
/** The Engine's property for a room: its folder's name (groups, flow, durable, coalesce). */
const engine = read("lib/services/engine-services.ts");

describe("the architecture's map of the rooms", () => {
  it("lists the four rooms", () => {
    expect(rooms.map((r) => r.folder)).toEqual(["groups", "flow", "durable", "coalesce"]);
  });

  for (const { folder, service } of [
    { folder: "groups", service: "GroupService" },
    { folder: "flow", service: "FlowService" },
    { folder: "durable", service: "DurableService" },
    { folder: "coalesce", service: "CoalesceService" },
  ]) {
    it(`lib/${folder}/ is a room behind ${service}, a property of the Engine`, () => {
      expect(rooms).toContainEqual({ folder, service });
      expect(existsSync(join(projectRoot, "lib", folder))).toBe(true);
      const contract = read(`lib/services/${service.replace("Service", "").toLowerCase()}-service.ts`);
      expect(contract).toContain(`export interface ${service} {`);
      expect(engine).toMatch(new RegExp(`^  ${folder}: ${service};$`, "m"));
    });
  }

  it("names only calls its rooms' services declare", () => {
    const calls = [...map.matchAll(/\b(groups|flow|durable|coalesce)\.(\w+)/g)].map((m) => [m[1], m[2]]);
    expect(calls.length).toBeGreaterThan(15);
    const contractOf = (room: string) =>
      read(`lib/services/${room === "groups" ? "group" : room}-service.ts`);
    const missing = calls.filter(
      ([room, call]) => !new RegExp(`^  ${call}\\(`, "m").test(contractOf(room ?? "")),
    );
    expect(missing).toEqual([]);
  });
});
