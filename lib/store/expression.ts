/**
 * Collects attribute names and values while condition and update fragments are composed, so every
 * name goes through a placeholder (DynamoDB reserves words like `status`) and values never collide.
 */
export class Expr {
  readonly names: Record<string, string> = {};
  readonly values: Record<string, unknown> = {};
  private next = 0;

  /** A dotted path (`holders.<job id>`) names a map's entry: one placeholder per segment. */
  name(attr: string): string {
    return attr
      .split(".")
      .map((segment) => {
        const key = `#${segment}`;
        this.names[key] = segment;
        return key;
      })
      .join(".");
  }

  /**
   * A map's entry under a key of any text (a step's name may hold `.`, `-` or spaces, which a
   * placeholder can't): the key gets a numbered placeholder of its own.
   */
  entry(map: string, key: string): string {
    const placeholder = `#_k${this.next++}`;
    this.names[placeholder] = key;
    return `${this.name(map)}.${placeholder}`;
  }

  value(v: unknown): string {
    const key = `:v${this.next++}`;
    this.values[key] = v;
    return key;
  }

  /** Fields for a Put/Update/Query input; omits empty maps, which DynamoDB rejects. */
  params(): {
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues?: Record<string, unknown>;
  } {
    return {
      ...(Object.keys(this.names).length ? { ExpressionAttributeNames: this.names } : {}),
      ...(Object.keys(this.values).length ? { ExpressionAttributeValues: this.values } : {}),
    };
  }
}

/** A piece of a ConditionExpression; it registers its own names and values. */
export type Condition = (e: Expr) => string;

export const and =
  (...parts: Condition[]): Condition =>
  (e) =>
    parts.map((p) => `(${p(e)})`).join(" AND ");

export const or =
  (...parts: Condition[]): Condition =>
  (e) =>
    parts.map((p) => `(${p(e)})`).join(" OR ");

/** Builds an UpdateExpression from SET (with arithmetic), REMOVE and set-ADD clauses. */
export class Update {
  private readonly sets: string[] = [];
  private readonly removes: string[] = [];
  private readonly adds: string[] = [];
  readonly e: Expr;

  constructor(e: Expr) {
    this.e = e;
  }

  set(attr: string, value: unknown): this {
    this.sets.push(`${this.e.name(attr)} = ${this.e.value(value)}`);
    return this;
  }

  /** Sets one entry of a map attribute, or one field of it (the map must exist: see Expr.entry). */
  setEntry(map: string, key: string, value: unknown, field?: string): this {
    const path = this.e.entry(map, key) + (field === undefined ? "" : `.${this.e.name(field)}`);
    this.sets.push(`${path} = ${this.e.value(value)}`);
    return this;
  }

  setAll(values: Record<string, unknown>): this {
    for (const [attr, value] of Object.entries(values)) this.set(attr, value);
    return this;
  }

  /** Sets only when the attribute is absent: used when a claim materializes a job from its message. */
  setIfAbsent(attr: string, value: unknown): this {
    const n = this.e.name(attr);
    this.sets.push(`${n} = if_not_exists(${n}, ${this.e.value(value)})`);
    return this;
  }

  /** Copies another attribute's value before this update (or a fallback when it is absent). */
  copy(attr: string, from: string, fallback: unknown): this {
    this.sets.push(`${this.e.name(attr)} = if_not_exists(${this.e.name(from)}, ${this.e.value(fallback)})`);
    return this;
  }

  increment(attr: string, by: number): this {
    const n = this.e.name(attr);
    this.sets.push(`${n} = if_not_exists(${n}, ${this.e.value(0)}) + ${this.e.value(by)}`);
    return this;
  }

  /** Appends to a list attribute, starting it when absent: a collect burst's payloads, in order. */
  append(attr: string, values: readonly unknown[]): this {
    const n = this.e.name(attr);
    this.sets.push(`${n} = list_append(if_not_exists(${n}, ${this.e.value([])}), ${this.e.value(values)})`);
    return this;
  }

  /** ADD to a set: adding a member twice leaves one, so a retried write changes nothing. */
  addToSet(attr: string, members: Set<number> | Set<string>): this {
    this.adds.push(`${this.e.name(attr)} ${this.e.value(members)}`);
    return this;
  }

  remove(...attrs: string[]): this {
    for (const a of attrs) this.removes.push(this.e.name(a));
    return this;
  }

  toString(): string {
    const parts: string[] = [];
    if (this.sets.length) parts.push(`SET ${this.sets.join(", ")}`);
    if (this.removes.length) parts.push(`REMOVE ${this.removes.join(", ")}`);
    if (this.adds.length) parts.push(`ADD ${this.adds.join(", ")}`);
    return parts.join(" ");
  }
}
