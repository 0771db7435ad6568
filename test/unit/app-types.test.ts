import { describe, expect, expectTypeOf, it } from "vitest";
import * as z from "zod";
import { app } from "../../app/index.ts";
import { appTypesSource } from "../../cli/app-types.ts";
import type { AppTypesNames } from "../../client/app-types.ts";
import { createClient } from "../../client/create-client.ts";
import type { SkyforgeClient } from "../../client/skyforge-client.ts";
import { clientForStage } from "../../client/stage-outputs.ts";
import type { Transport } from "../../client/transport.ts";
import type { AppNames } from "../../client/vocabulary.ts";

/**
 * `skyforge types` (cli/app-types.ts): each kind's payload as a producer writes it, from its zod
 * schema's input side; what JSON can't carry is `unknown`. The file itself is compiled against the
 * packed client by test/e2e/client-package.test.ts.
 */
function appOf(kinds: { name: string; payload: z.ZodType }[]): AppNames {
  return {
    kinds: kinds.map((k) => ({ ...k, queue: "default" })),
    poolKinds: [],
    queues: [{ name: "default" }],
    rateLimits: [],
  } as unknown as AppNames;
}

describe("the app's types", () => {
  it("prints a payload's fields: required or not (a default makes one optional), unions, tuples, maps", () => {
    const source = appTypesSource(
      appOf([
        {
          name: "shapes",
          payload: z.object({
            id: z.string().describe("the order"),
            n: z.number().int().default(1),
            tags: z.array(z.string()),
            pair: z.tuple([z.string(), z.number()]),
            mode: z.enum(["a", "b"]),
            lit: z.literal(3),
            maybe: z.string().nullable(),
            opt: z.boolean().optional(),
            map: z.record(z.string(), z.number()),
            when: z.date(),
            t: z.string().transform((s) => s.length),
            "odd-key": z.union([z.string(), z.array(z.number())]),
          }),
        },
        { name: "9lives", payload: z.string() },
      ]),
      "test",
    );
    expect(source).toContain(
      [
        "export type ShapesPayload = {",
        "  /** the order */",
        "  id: string;",
        "  n?: number;",
        "  tags: string[];",
        "  pair: [string, number];",
        '  mode: "a" | "b";',
        "  lit: 3;",
        "  maybe: string | null;",
        "  opt?: boolean;",
        "  map: { [key: string]: number };",
        "  when: unknown;",
        "  t: string;",
        '  "odd-key": string | number[];',
        "};",
      ].join("\n"),
    );
    expect(source).toContain("export type _9livesPayload = string;");
    expect(source).toContain(
      [
        "  kinds: {",
        "    shapes: ShapesPayload;",
        '    "9lives": _9livesPayload;',
        "  };",
        '  queues: "default";',
      ].join("\n"),
    );
  });

  it("a recursive schema is an alias that names itself", () => {
    const source = appTypesSource(appOf([{ name: "tree", payload: z.json() }]), "test");
    expect(source).toContain(
      "export type TreePayload = string | number | boolean | null | TreePayload[] | { [key: string]: TreePayload };",
    );
  });

  it("names every kind of the app, pool kinds as JSON, and its queues", () => {
    const source = appTypesSource(app, "app/index.ts");
    for (const kind of [...app.kinds, ...app.poolKinds]) {
      expect(source).toMatch(new RegExp(`\\n {4}("${kind.name}"|${kind.name}): \\w+;\\n`));
    }
    for (const pool of app.poolKinds) expect(source).toContain(`    "${pool.name}": JsonValue;\n`);
    expect(source).toContain(`  queues: ${app.queues.map((q) => JSON.stringify(q.name)).join(" | ")};\n`);
  });

  it("createClient and clientForStage take the interface it writes (checked by tsc)", () => {
    interface SkyforgeApp {
      kinds: { echo: { message: string }; "pool-x": unknown };
      queues: "default" | "batch";
    }
    type Client = SkyforgeClient<AppTypesNames<SkyforgeApp>>;
    expectTypeOf<Parameters<Client["enqueue"]>[0]>().toEqualTypeOf<"echo" | "pool-x">();
    // Compiled, never run: what each returns for the interface.
    const _returns = async (transport: Transport) => {
      expectTypeOf(createClient<SkyforgeApp>({ transport })).toEqualTypeOf<Client>();
      expectTypeOf(await clientForStage<SkyforgeApp>("prod")).toEqualTypeOf<Client & { close(): void }>();
    };
    // Compiled, never run: a misspelled kind, a wrong payload and an unknown queue are refused.
    const _unused = (jobs: Client) => {
      // @ts-expect-error a kind the app doesn't have
      void jobs.enqueue("ecko", { message: "x" });
      // @ts-expect-error a payload of the wrong shape
      void jobs.enqueue("echo", { message: 1 });
      // @ts-expect-error a queue the app doesn't have
      void jobs.enqueue("echo", { message: "x" }, { queue: "nope" });
    };
  });
});
