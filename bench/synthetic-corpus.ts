/** Deterministic synthetic corpora built from real sentences, for scale benchmarks. */
import { mulberry32 } from "../src/learning/random.ts";
import type { CorpusAbstract } from "../src/types.ts";

/** `count` abstracts of 6-12 sentences each and titles, sampled with a fixed seed from the given abstracts. */
export function seededShuffleSentences(
  corpus: CorpusAbstract[],
  count: number,
  seed = 42,
): { abstracts: string[]; titles: string[] } {
  const sentences = corpus.flatMap((a) => a.sentences ?? [a.abstract]);
  const titles = corpus.map((a) => a.title ?? "");
  const rnd = mulberry32(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
  const outAbstracts: string[] = [];
  const outTitles: string[] = [];
  for (let i = 0; i < count; i++) {
    const n = 6 + Math.floor(rnd() * 7);
    const parts: string[] = [];
    for (let j = 0; j < n; j++) parts.push(pick(sentences));
    outAbstracts.push(parts.join(" "));
    outTitles.push(pick(titles));
  }
  return { abstracts: outAbstracts, titles: outTitles };
}
