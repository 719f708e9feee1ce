/**
 * A persistent cache in front of any Ev2R judge, so the same text or pair is never judged twice (an interrupted
 * run resumes where it stopped, and LLM scores do not drift between runs). Keys are sha1 of the judge name
 * (backend, model, prompt version), the kind of question and the exact texts. One append-only JSON Lines file
 * per judge; a torn last line (a crash mid-write) is skipped on reading, and so is a record that fails its check.
 */
import { createHash } from "node:crypto";
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { cacheDir } from "../../data/paths.ts";
import type { AbstractText, Judge } from "../ev2r.ts";

export interface JudgeCacheStats {
  hits: number;
  misses: number;
}

/** Where a judge's cache lives by default: one file per judge name under cacheDir()/ev2r. */
export const judgeCacheFile = (judgeName: string, dir = join(cacheDir(), "ev2r")): string =>
  join(dir, `${judgeName.replace(/[^\w.@+-]/g, "_")}.jsonl`);

const keyOf = (...parts: string[]): string => {
  const h = createHash("sha1");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex");
};

const docKey = (d: AbstractText): string =>
  JSON.stringify([d.title ?? null, d.abstract, d.sentences ?? null]);

const isStrings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === "string");
const isFlags = (v: unknown, n: number): v is boolean[] =>
  Array.isArray(v) && v.length === n && v.every((x) => typeof x === "boolean");

function loadRecords(file: string): Map<string, unknown> {
  const records = new Map<string, unknown>();
  if (!existsSync(file)) return records;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line === "") continue;
    try {
      const r = JSON.parse(line) as { k?: unknown; v?: unknown };
      if (typeof r.k === "string") records.set(r.k, r.v);
    } catch {
      // A torn line from an interrupted write: that answer is simply asked again.
    }
  }
  return records;
}

/** Makes the file end with a newline, so a record appended after a torn line is not glued onto it. */
function endWithNewline(file: string): void {
  if (!existsSync(file)) return;
  const fd = openSync(file, "r");
  try {
    const size = statSync(file).size;
    if (size === 0) return;
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    if (last[0] !== 10) appendFileSync(file, "\n");
  } finally {
    closeSync(fd);
  }
}

/** The judge with its answers cached in `file`; identical questions in flight are asked once. */
export function cachedJudge(
  judge: Judge,
  file = judgeCacheFile(judge.name),
): Judge & { stats: JudgeCacheStats } {
  mkdirSync(join(file, ".."), { recursive: true });
  endWithNewline(file);
  const records = loadRecords(file);
  const inFlight = new Map<string, Promise<unknown>>();
  const stats: JudgeCacheStats = { hits: 0, misses: 0 };

  const ask = <T>(key: string, valid: (v: unknown) => v is T, compute: () => Promise<T>): Promise<T> => {
    const stored = records.get(key);
    if (valid(stored)) {
      stats.hits++;
      return Promise.resolve(stored);
    }
    const pending = inFlight.get(key);
    if (pending) {
      stats.hits++;
      return pending as Promise<T>;
    }
    stats.misses++;
    const p = compute().then((v) => {
      records.set(key, v);
      appendFileSync(file, `${JSON.stringify({ k: key, v })}\n`);
      return v;
    });
    inFlight.set(key, p);
    // Once settled the record (or the failure) is final for this run; later asks read `records` or retry.
    p.finally(() => inFlight.delete(key)).catch(() => {});
    return p;
  };

  return {
    name: judge.name,
    approximation: judge.approximation,
    stats,
    atomicFacts: (doc) =>
      ask(keyOf(judge.name, "facts", docKey(doc)), isStrings, () => judge.atomicFacts(doc)),
    supported: (facts, evidence) =>
      ask(
        keyOf(judge.name, "supported", docKey(evidence), JSON.stringify(facts)),
        (v): v is boolean[] => isFlags(v, facts.length),
        () => judge.supported(facts, evidence),
      ),
  };
}
