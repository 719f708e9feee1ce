/** Deterministic synthetic corpora built from real sentences, for scale benchmarks. */
import { mulberry32 } from "../src/learning/random.ts";
import type { CorpusAbstract } from "../src/types.ts";

/**
 * `count` abstracts of 6-12 sentences each and titles, sampled with a fixed seed from the given abstracts, with
 * the source abstract of each title and of each first sentence (to give synthetic docs realistic vectors).
 */
export function seededShuffleSentences(
  corpus: CorpusAbstract[],
  count: number,
  seed = 42,
): { abstracts: string[]; titles: string[]; titleSource: number[]; leadSource: number[] } {
  const sentences: string[] = [];
  const sentenceDoc: number[] = [];
  corpus.forEach((a, d) => {
    for (const s of a.sentences ?? [a.abstract]) {
      sentences.push(s);
      sentenceDoc.push(d);
    }
  });
  const titles = corpus.map((a) => a.title ?? "");
  const rnd = mulberry32(seed);
  const pick = (n: number) => Math.floor(rnd() * n);
  const out = {
    abstracts: [] as string[],
    titles: [] as string[],
    titleSource: [] as number[],
    leadSource: [] as number[],
  };
  for (let i = 0; i < count; i++) {
    const n = 6 + Math.floor(rnd() * 7);
    const parts: string[] = [];
    for (let j = 0; j < n; j++) {
      const s = pick(sentences.length);
      if (j === 0) out.leadSource.push(sentenceDoc[s]);
      parts.push(sentences[s]);
    }
    out.abstracts.push(parts.join(" "));
    const t = pick(titles.length);
    out.titles.push(titles[t]);
    out.titleSource.push(t);
  }
  return out;
}
