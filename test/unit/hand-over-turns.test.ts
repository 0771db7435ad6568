import { describe, expect, it } from "vitest";
import { type HandOverEntry, HandOverTurns } from "../../lib/flow/hand-over-turns.ts";

/** A hand-over that records what it handed on, and ends when `release` is called for it. */
function recorder() {
  const runs: { first: string; joined: string[] }[] = [];
  const releases: (() => void)[] = [];
  const run = (first: HandOverEntry, joiners: () => HandOverEntry[]) =>
    new Promise<void>((release) => {
      const record = { first: first.id, joined: [] as string[] };
      runs.push(record);
      releases.push(() => {
        record.joined = joiners().map((e) => e.id);
        release();
      });
    });
  return { runs, run, releaseNext: () => releases.shift()?.() };
}

const entry = (id: string): HandOverEntry => ({ id, waiting: false });
const flush = () => new Promise((r) => setImmediate(r));

describe("a flow key's hand-overs in one process (HandOverTurns)", () => {
  it("one at a time per key; those that came while one ran join it, and a later one runs in its own turn", async () => {
    const turns = new HandOverTurns();
    const { runs, run, releaseNext } = recorder();
    const ended: string[] = [];
    const take = (key: string, id: string) => turns.take(key, entry(id), run).then(() => ended.push(id));
    const all = [take("k", "a"), take("k", "b"), take("k", "c"), take("other", "x")];
    await flush();
    // a's runs; b and c wait; another key's runs beside it.
    expect(runs.map((r) => r.first)).toEqual(["a", "x"]);
    releaseNext();
    await flush();
    expect(runs[0]?.joined).toEqual(["b", "c"]);
    expect(ended.sort()).toEqual(["a", "b", "c"]);
    const later = take("k", "d");
    await flush();
    expect(runs.map((r) => r.first)).toEqual(["a", "x", "d"]);
    releaseNext();
    releaseNext();
    await Promise.all([...all, later]);
    expect(ended.sort()).toEqual(["a", "b", "c", "d", "x"]);
  });

  it("joins 15 entries at most into one hand-over; the rest take the next turn", async () => {
    const turns = new HandOverTurns();
    const { runs, run, releaseNext } = recorder();
    const all = Array.from({ length: 20 }, (_, i) => turns.take("k", entry(`e${i}`), run));
    await flush();
    releaseNext();
    await flush();
    expect(runs.map((r) => [r.first, r.joined.length])).toEqual([
      ["e0", 15],
      ["e16", 0],
    ]);
    releaseNext();
    await flush();
    expect(runs.map((r) => [r.first, r.joined.length])).toEqual([
      ["e0", 15],
      ["e16", 3],
    ]);
    await Promise.all(all);
  });

  it("a hand-over that throws leaves none of the key's others waiting", async () => {
    const turns = new HandOverTurns();
    const seen: string[] = [];
    const failing = async () => {
      throw new Error("store down");
    };
    const first = turns.take("k", entry("a"), failing);
    const second = turns.take("k", entry("b"), async (e) => {
      seen.push(e.id);
    });
    await Promise.all([first, second]);
    expect(seen).toEqual(["b"]);
  });
});
