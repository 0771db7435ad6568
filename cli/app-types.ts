import * as z from "zod";
import type { AppNames } from "../client/vocabulary.ts";

/**
 * The declaration file `skyforge types` writes: the app's kind names with the payload each takes
 * (as a producer sends it: zod's input type, through z.toJSONSchema) and its queue names, as the
 * interface `SkyforgeApp` that `createClient<SkyforgeApp>()` reads (client/app-types.ts). A project
 * that installs the client gets the app's names without the app's source, zod or skyforge's lib/.
 * Payloads are JSON: a part of a schema JSON Schema can't say (a transform's output, a custom check)
 * becomes `unknown`, and the API still checks the payload.
 */
export function appTypesSource(app: AppNames, from: string): string {
  const aliases: string[] = [];
  const used = new Set<string>();
  const entries: string[] = [];
  for (const kind of app.kinds) {
    const name = uniqueName(`${pascal(kind.name)}Payload`, used);
    const schema = jsonSchemaOf(kind.payload);
    const printer = new SchemaPrinter(name, schema);
    aliases.push(
      `/** The payload of "${kind.name}" (queue "${kind.queue}"). */\nexport type ${name} = ${printer.root()};\n`,
    );
    aliases.push(...printer.definitions());
    entries.push(`    ${key(kind.name)}: ${name};`);
  }
  for (const pool of app.poolKinds) {
    entries.push(`    /** A pool kind (queue "${pool.queue}"): any JSON, checked by its child program. */`);
    entries.push(`    ${key(pool.name)}: JsonValue;`);
  }
  const queues = app.queues.map((q) => JSON.stringify(q.name)).join(" | ") || "never";
  return [
    `// Written by \`npx skyforge types\` from ${from}: do not edit, run it again when a kind changes.`,
    "",
    "/** Any JSON value. */",
    "export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };",
    "",
    ...aliases,
    "/** The app's kinds (name → the payload a producer sends) and queues: `createClient<SkyforgeApp>()`. */",
    "export interface SkyforgeApp {",
    "  kinds: {",
    ...entries,
    "  };",
    `  queues: ${queues};`,
    "}",
    "",
  ].join("\n");
}

type Schema = boolean | { [key: string]: unknown };

function jsonSchemaOf(schema: z.ZodType): Schema {
  try {
    return z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "any",
      cycles: "ref",
      reused: "inline",
    }) as Schema;
  } catch {
    // A schema zod can't describe at all: the kind's payload is then only checked by the API.
    return true;
  }
}

/** JSON Schema (draft 2020-12, as zod writes it) printed as a TypeScript type. */
class SchemaPrinter {
  private readonly base: string;
  private readonly rootSchema: Schema;
  private readonly defs: Record<string, Schema>;

  constructor(base: string, schema: Schema) {
    this.base = base;
    this.rootSchema = schema;
    this.defs = typeof schema === "object" ? ((schema.$defs as Record<string, Schema>) ?? {}) : {};
  }

  root(): string {
    return this.print(this.rootSchema, "");
  }

  /** `$defs` (recursive parts of a schema) as aliases of their own. */
  definitions(): string[] {
    return Object.entries(this.defs).map(
      ([name, schema]) => `export type ${this.defName(name)} = ${this.print(schema, "")};\n`,
    );
  }

  private defName(name: string): string {
    return `${this.base}_${name.replace(/[^A-Za-z0-9_]/g, "_")}`;
  }

  private print(schema: Schema, indent: string): string {
    if (schema === true) return "unknown";
    if (schema === false) return "never";
    const s = schema;
    if (typeof s.$ref === "string") {
      if (s.$ref === "#") return this.base;
      const def = /^#\/\$defs\/(.+)$/.exec(s.$ref)?.[1];
      return def !== undefined && def in this.defs ? this.defName(def) : "unknown";
    }
    if ("const" in s) return JSON.stringify(s.const);
    if (Array.isArray(s.enum)) return s.enum.map((v) => JSON.stringify(v)).join(" | ") || "never";
    for (const union of ["anyOf", "oneOf"] as const) {
      if (Array.isArray(s[union])) return this.join(s[union] as Schema[], " | ", indent);
    }
    if (Array.isArray(s.allOf)) return this.join(s.allOf as Schema[], " & ", indent);
    if (Array.isArray(s.type)) {
      return (s.type as string[]).map((t) => this.print({ ...s, type: t }, indent)).join(" | ");
    }
    switch (s.type) {
      case "string":
        return "string";
      case "number":
      case "integer":
        return "number";
      case "boolean":
        return "boolean";
      case "null":
        return "null";
      case "array":
        return this.array(s, indent);
      case "object":
        return this.object(s, indent);
      default:
        return s.properties || s.additionalProperties ? this.object(s, indent) : "unknown";
    }
  }

  private join(parts: Schema[], separator: string, indent: string): string {
    if (parts.length === 0) return separator === " | " ? "never" : "unknown";
    return parts
      .map((p) => this.print(p, indent))
      .map((t) => (/ [|&] /.test(t) ? `(${t})` : t))
      .join(separator);
  }

  private array(s: { [key: string]: unknown }, indent: string): string {
    const items = s.items as Schema | undefined;
    if (Array.isArray(s.prefixItems)) {
      const fixed = (s.prefixItems as Schema[]).map((p) => this.print(p, indent));
      const rest = items === undefined || items === false ? [] : [`...${this.element(items, indent)}[]`];
      return `[${[...fixed, ...rest].join(", ")}]`;
    }
    return `${this.element(items ?? true, indent)}[]`;
  }

  private element(items: Schema, indent: string): string {
    const type = this.print(items, indent);
    return /^[\w."]+$/.test(type) ? type : `(${type})`;
  }

  private object(s: { [key: string]: unknown }, indent: string): string {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const required = new Set((s.required ?? []) as string[]);
    const inner = `${indent}  `;
    const lines = Object.entries(properties).map(([name, property]) => {
      const description =
        typeof property === "object" && typeof property.description === "string"
          ? `${inner}/** ${property.description.replaceAll("*/", "* /")} */\n`
          : "";
      const optional = required.has(name) ? "" : "?";
      return `${description}${inner}${key(name)}${optional}: ${this.print(property, inner)};`;
    });
    const shape = lines.length > 0 ? `{\n${lines.join("\n")}\n${indent}}` : undefined;
    const extra = s.additionalProperties;
    const rest =
      extra === undefined || extra === false
        ? undefined
        : `{ [key: string]: ${this.print(extra as Schema, indent)} }`;
    if (shape && rest) return `${shape} & ${rest}`;
    // A schema that names no property and allows none is an empty object; one that says nothing, any object.
    return shape ?? rest ?? (extra === false ? "Record<string, never>" : "{ [key: string]: unknown }");
  }
}

const key = (name: string): string => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));

const pascal = (name: string): string =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join("")
    .replace(/^(\d)/, "_$1") || "Kind";

function uniqueName(name: string, used: Set<string>): string {
  let candidate = name;
  for (let n = 2; used.has(candidate); n++) candidate = `${name}${n}`;
  used.add(candidate);
  return candidate;
}
