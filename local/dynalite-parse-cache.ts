import { createRequire } from "node:module";

/**
 * dynalite parses every request's ConditionExpression (and KeyConditionExpression) afresh with a
 * PEG parser that backtracks through each operand; a profile of `npm start` under a burst of echo
 * jobs put 30% of the stack's whole CPU there (dynalite 4.0.0), for the same few dozen expressions
 * the engine sends again and again. This keeps each parse, keyed by everything the parse can depend
 * on, and hands out a copy with the request's own values in it. The emulator's behaviour is
 * unchanged: what a request gets is what dynalite's parser gives it (test/unit/dynalite-parse-cache.test.ts
 * compares the two over the engine's expressions and every error class).
 *
 * What a parse depends on: the expression, the names (`#n` → attribute), and of each value only its
 * type (the parser checks operand types, and embeds the value objects by reference). Two checks read
 * a value's content, BETWEEN's bounds and attribute_type's type name: an expression naming either is
 * parsed as before, never kept. A parse that ends in an error is never kept either.
 */

/** The `context` dynalite's validations hand its parsers (dynalite/validations/index.js). */
export interface ParseContext {
  attrNames?: Record<string, string>;
  attrVals?: Record<string, Record<string, unknown>>;
  unusedAttrNames?: Record<string, boolean>;
  unusedAttrVals?: Record<string, boolean>;
  isKeyCondition?: boolean;
  [other: string]: unknown;
}

export interface PegParser {
  parse(input: string, options: { context: ParseContext }): unknown;
}

interface KeptParse {
  /** The parse's result, holding a stand-in object where a value was embedded. */
  result: unknown;
  /** Each stand-in, to the value name it stands for. */
  standIns: Map<object, string>;
  /** The names and values the parse marked used (the parser deletes them from the context's unused sets). */
  usedNames: string[];
  usedValues: string[];
}

/** Parses read values' content here (BETWEEN bounds' order; attribute_type's argument). */
const READS_VALUE_CONTENT = /between|attribute_type/i;
const VALUE_TYPES = ["S", "N", "B", "NULL", "BOOL", "SS", "NS", "BS", "L", "M"] as const;
/** Enough for every expression the engine sends (a few dozen); a flood of ad-hoc ones starts over. */
const MAX_KEPT = 5_000;
const INSTALLED = Symbol.for("skyforge.dynalite-parse-cache");

export interface ParseCache {
  /** Parses answered from a kept one, parses kept, and parses left to dynalite as before. */
  stats: { hits: number; misses: number; passedThrough: number };
  /** dynalite's own parse, for comparing the two. */
  uncached: PegParser["parse"];
}

/**
 * Keeps dynalite's condition parses (idempotent: a second call returns what the first installed).
 * dynalite's validations call the parser through its module object, so the wrapper goes there.
 */
export function cacheDynaliteConditionParses(): ParseCache {
  const parser = dynaliteConditionParser() as PegParser & { [INSTALLED]?: ParseCache };
  const installed = parser[INSTALLED];
  if (installed) return installed;
  const parse = parser.parse.bind(parser);
  const stats: ParseCache["stats"] = { hits: 0, misses: 0, passedThrough: 0 };
  const kept = new Map<string, KeptParse>();
  parser.parse = (input, options) => {
    const context = options.context;
    const key = keyOf(input, context);
    if (key === undefined) {
      stats.passedThrough++;
      return parse(input, options);
    }
    let entry = kept.get(key);
    if (entry) stats.hits++;
    else {
      entry = parseWithStandIns(parse, input, context);
      if (!entry) {
        stats.passedThrough++;
        return parse(input, options);
      }
      stats.misses++;
      if (kept.size >= MAX_KEPT) kept.clear();
      kept.set(key, entry);
    }
    for (const name of entry.usedNames) delete context.unusedAttrNames?.[name];
    for (const name of entry.usedValues) delete context.unusedAttrVals?.[name];
    const values = context.attrVals ?? {};
    const standIns = entry.standIns;
    return copyWith(entry.result, (node) => {
      const name = standIns.get(node);
      return name === undefined ? undefined : values[name];
    });
  };
  parser[INSTALLED] = { stats, uncached: parse };
  return parser[INSTALLED];
}

/** The module dynalite's validations parse conditions with (its `parse` is what they call). */
export function dynaliteConditionParser(): PegParser {
  return createRequire(import.meta.url)("dynalite/db/conditionParser.js") as PegParser;
}

/** Everything the parse of `input` depends on, or undefined when it must be parsed as before. */
function keyOf(input: string, context: ParseContext): string | undefined {
  if (READS_VALUE_CONTENT.test(input)) return undefined;
  const types: string[] = [];
  for (const [name, value] of Object.entries(context.attrVals ?? {})) {
    const type = typeOf(value);
    if (type === undefined) return undefined;
    types.push(`${name}=${type}`);
  }
  return [
    input,
    JSON.stringify(context.attrNames ?? null),
    types.join(","),
    context.isKeyCondition ? "key" : "",
  ].join("\u0000");
}

/** The parse of `input` with a stand-in of the same type for each value; undefined if it errs. */
function parseWithStandIns(
  parse: PegParser["parse"],
  input: string,
  context: ParseContext,
): KeptParse | undefined {
  const standIns = new Map<object, string>();
  const standInValues: Record<string, Record<string, unknown>> = {};
  for (const [name, value] of Object.entries(context.attrVals ?? {})) {
    const standIn = { [typeOf(value) as string]: STAND_IN_CONTENT };
    standIns.set(standIn, name);
    standInValues[name] = standIn;
  }
  const unusedNames = { ...context.unusedAttrNames };
  const unusedValues = { ...context.unusedAttrVals };
  let result: unknown;
  try {
    result = parse(input, {
      context: {
        ...context,
        attrVals: standInValues,
        unusedAttrNames: unusedNames,
        unusedAttrVals: unusedValues,
      },
    });
  } catch {
    return undefined;
  }
  if (typeof result === "string") return undefined;
  return {
    result,
    standIns,
    usedNames: Object.keys(context.unusedAttrNames ?? {}).filter((name) => !(name in unusedNames)),
    usedValues: Object.keys(context.unusedAttrVals ?? {}).filter((name) => !(name in unusedValues)),
  };
}

/** Any non-null content: the parser only asks which type a value has. */
const STAND_IN_CONTENT = "";

function typeOf(value: unknown): string | undefined {
  if (!value || typeof value !== "object" || Array.isArray(value)) return undefined;
  const present = VALUE_TYPES.filter((type) => (value as Record<string, unknown>)[type] != null);
  return present.length === 1 ? present[0] : undefined;
}

/** A deep copy of a parse result (arrays, and objects with their prototype: some are null-prototype maps), swapping stand-ins back. */
function copyWith(node: unknown, swap: (node: object) => unknown): unknown {
  if (node === null || typeof node !== "object") return node;
  const swapped = swap(node);
  if (swapped !== undefined) return swapped;
  if (Array.isArray(node)) return node.map((item) => copyWith(item, swap));
  const copy = Object.create(Object.getPrototypeOf(node)) as Record<string, unknown>;
  for (const [field, value] of Object.entries(node)) copy[field] = copyWith(value, swap);
  return copy;
}
