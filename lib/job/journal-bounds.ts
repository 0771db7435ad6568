/**
 * A job's journal: at most this many steps, sleeps and waits, and their names at most this many
 * bytes together. Both bound the job item, which carries a record of each (DynamoDB refuses an item
 * over 400 KB, and then every later write of the job, its finalize and a cancel too): 1 000 records
 * of a few dozen bytes plus 128 KiB of names plus 32 KiB of inline results stay well under it
 * (test/unit/journal-limits.test.ts sizes that worst case).
 */
export const MAX_STEPS_PER_JOB = 1_000;
export const MAX_STEP_NAMES_BYTES = 128 * 1024;

/** The journal's bounds in force: the documented ones, or smaller ones a test injects (EngineConfig). */
export interface JournalLimits {
  steps: number;
  nameBytes: number;
}

export const JOURNAL_LIMITS: JournalLimits = { steps: MAX_STEPS_PER_JOB, nameBytes: MAX_STEP_NAMES_BYTES };

/**
 * The names a job's journal holds (those it recorded, then those a run meets), kept with their bytes,
 * so a new name is checked against both bounds without going over the others again.
 */
export class JournalBounds {
  private names: number;
  private bytes = 0;
  private readonly utf8 = new TextEncoder();

  private readonly limits: JournalLimits;

  constructor(recorded: readonly string[], limits: JournalLimits = JOURNAL_LIMITS) {
    this.limits = limits;
    this.names = recorded.length;
    for (const name of recorded) this.bytes += this.utf8.encode(name).length;
  }

  /**
   * Takes a name the journal doesn't hold yet. result: why it can't (the same on every attempt, so
   * the caller ends the job dead at once), or undefined, the name now counted.
   */
  admit(name: string): string | undefined {
    const { steps, nameBytes } = this.limits;
    if (this.names >= steps) return `step "${name}": a job records at most ${steps} steps, sleeps and waits`;
    const bytes = this.bytes + this.utf8.encode(name).length;
    if (bytes > nameBytes)
      return `step "${name}": a job's step, sleep and wait names come to at most ${nameBytes} bytes together`;
    this.names += 1;
    this.bytes = bytes;
    return undefined;
  }
}
