/**
 * The BM25 field's analysis on top of the one tokenizer: a stop list, then Porter2 (Snowball English) stemming
 * from wink-porter2-stemmer. Only the index's term matching uses it; features that need the surface form
 * (numbers, negations, direction words) keep reading tokenize() output. Negations and direction words are
 * deliberately not stop words, and tokens with a digit are never stemmed ("2.5" and "co2" stay as written).
 */
import porter2 from "wink-porter2-stemmer";
import { STOPWORDS, tokenize } from "./tokenize.ts";

/** Names the analysis in the index manifest; bump when the stop list or the stemmer changes. */
export const BM25_ANALYZER = "porter2+stop-v1";
/** The analysis of schema 2 indexes (tokenizer stop words, no stemming): the "old BM25" of the benchmark. */
export const PLAIN_ANALYZER = "plain-v0";
export type Analyzer = typeof BM25_ANALYZER | typeof PLAIN_ANALYZER;

/**
 * STOPWORDS plus more function words that carry no topic. Not here on purpose: no, not, nor, never, without,
 * against, more, less, most, few, up, down, above, below, increase/decrease words, before/after.
 */
export const BM25_STOPWORDS: ReadonlySet<string> = new Set([
  ...STOPWORDS,
  ..."am because while until between through during under again further once here nor off out whose whether yet though although however thus therefore hence among within via per upon onto across along around et al eg ie e.g i.e vs us itself themselves ourselves yourself himself herself".split(
    " ",
  ),
]);

const memo = new Map<string, string>();

/** Porter2 stem of one token (memoised: a corpus has far fewer distinct tokens than tokens). */
export function stem(token: string): string {
  let s = memo.get(token);
  if (s === undefined) {
    s = /\d/.test(token) ? token : porter2(token);
    if (memo.size >= 500_000) memo.clear();
    memo.set(token, s);
  }
  return s;
}

/** The index term of one token under an analyzer, or undefined for a stop word. */
export function termOf(token: string, analyzer: Analyzer): string | undefined {
  if (analyzer === PLAIN_ANALYZER) return STOPWORDS.has(token) ? undefined : token;
  return BM25_STOPWORDS.has(token) ? undefined : stem(token);
}

/** Index terms of a text under an analyzer, in order. */
export function analyze(text: string, analyzer: Analyzer = BM25_ANALYZER): string[] {
  const out: string[] = [];
  for (const t of tokenize(text)) {
    const term = termOf(t, analyzer);
    if (term !== undefined) out.push(term);
  }
  return out;
}
