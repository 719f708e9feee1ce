/**
 * Stance cues: what a text says happens to what. A CARDS code is a proposition with a direction ("ice isn't
 * melting", "sea level rise is not accelerating"), and the same subject words appear in texts that assert it and
 * in texts that deny it. Bag-of-words features see the subject; these see the direction: every direction word
 * (rising, shrinking, accelerating, ...), flipped when a negation precedes it, is paired with the content words
 * around it ("ice:-" for "sea ice is shrinking", "ice:+" for "sea ice is growing", "accelerating:-" for "not
 * accelerating"), and every word in a negation's scope is marked ("not:warming"). Cues are hashed into a fixed
 * number of buckets, so the block needs no vocabulary.
 */

import { STOPWORDS } from "../text/tokenize.ts";
import { DIRECTION, NEGATIONS } from "../verification/lexicon.ts";

/** Buckets of the hashed cue block. */
export const CUE_DIM = 1 << 14;
/** Tokens after a negation that it governs ("is not really accelerating"). */
const NEGATION_SCOPE = 3;
/** Content words on each side of a direction word that it is paired with. */
const WINDOW = 4;

const isContent = (t: string) => !STOPWORDS.has(t) && !NEGATIONS.has(t) && !DIRECTION.has(t) && t.length > 1;

/** The cue strings of a tokenized text (src/text/tokenize.ts), in order, with repeats. */
export function stanceCues(tokens: readonly string[]): string[] {
  const out: string[] = [];
  let scope = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (NEGATIONS.has(t)) {
      scope = NEGATION_SCOPE;
      continue;
    }
    const negated = scope > 0;
    if (negated) {
      scope--;
      if (!STOPWORDS.has(t)) out.push(`not:${t}`);
    }
    const d = DIRECTION.get(t);
    if (d === undefined) continue;
    const sign = (negated ? -d : d) > 0 ? "+" : "-";
    out.push(`dir:${sign}`, `${t}:${negated ? "neg" : "pos"}`);
    for (let j = Math.max(0, i - WINDOW); j <= Math.min(tokens.length - 1, i + WINDOW); j++) {
      if (j !== i && isContent(tokens[j])) out.push(`${tokens[j]}:${sign}`);
    }
  }
  return out;
}

/** FNV-1a, 32-bit: a stable bucket for a cue on every platform. */
export function cueBucket(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % CUE_DIM;
}

/** Cue counts by bucket, sublinear (1 + log count), as parallel index/value arrays sorted by index. */
export function cueVector(tokens: readonly string[]): { indices: number[]; values: number[] } {
  const counts = new Map<number, number>();
  for (const c of stanceCues(tokens)) {
    const b = cueBucket(c);
    counts.set(b, (counts.get(b) ?? 0) + 1);
  }
  const indices = [...counts.keys()].sort((a, b) => a - b);
  return { indices, values: indices.map((b) => 1 + Math.log(counts.get(b) ?? 1)) };
}
