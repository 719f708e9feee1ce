/**
 * Off-the-shelf BM25 peers for the retrieval benchmark (dev dependencies only): wink-bm25-text-search with the
 * wink-nlp-utils preparation its README shows (lower case, tokenize0, stop words out, Porter2 stems, negations
 * propagated), and lunr with its default pipeline (trimmer, stop word filter, Porter stemmer). Both index title
 * and abstract as two fields with stock parameters; both get the raw claim text.
 */
import { createRequire } from "node:module";
import type { CorpusDocs } from "../src/retrieval/tune-bm25.ts";

const require = createRequire(import.meta.url);

export interface Peer {
  name: string;
  /** Docnos of the top k for a claim. */
  search(text: string, k: number): number[];
}

type Prep = (x: unknown) => unknown;
interface WinkEngine {
  defineConfig(c: { fldWeights: Record<string, number> }): void;
  definePrepTasks(t: Prep[]): void;
  addDoc(doc: Record<string, string>, id: number): void;
  consolidate(): void;
  search(text: string, limit?: number): [number, number][];
}

export function winkPeer(docs: CorpusDocs): Peer {
  const bm25 = require("wink-bm25-text-search") as () => WinkEngine;
  const nlp = require("wink-nlp-utils") as {
    string: Record<string, Prep>;
    tokens: Record<string, Prep>;
  };
  const engine = bm25();
  engine.defineConfig({ fldWeights: { title: 1, body: 1 } });
  engine.definePrepTasks([
    nlp.string.lowerCase,
    nlp.string.tokenize0,
    nlp.tokens.removeWords,
    nlp.tokens.stem,
    nlp.tokens.propagateNegations,
  ]);
  docs.ids.forEach((_, i) => {
    engine.addDoc({ title: docs.titles[i], body: docs.abstracts[i] }, i);
  });
  engine.consolidate();
  return {
    name: "wink-bm25-text-search 3.1.2 (+ wink-nlp-utils prep)",
    search: (text, k) => engine.search(text, k).map(([id]) => Number(id)),
  };
}

interface LunrToken {
  toString(): string;
}
interface LunrQuery {
  term(t: LunrToken[], o?: object): void;
}
interface LunrIndex {
  query(f: (q: LunrQuery) => void): { ref: string; score: number }[];
}
interface LunrBuilder {
  ref(f: string): void;
  field(f: string): void;
  add(doc: Record<string, string>): void;
}
type Lunr = ((config: (this: LunrBuilder) => void) => LunrIndex) & { tokenizer(t: string): LunrToken[] };

export function lunrPeer(docs: CorpusDocs): Peer {
  const lunr = require("lunr") as Lunr;
  const index = lunr(function () {
    this.ref("docno");
    this.field("title");
    this.field("body");
    docs.ids.forEach((_, i) => {
      this.add({ docno: String(i), title: docs.titles[i], body: docs.abstracts[i] });
    });
  });
  return {
    name: "lunr 2.3.9 (default pipeline: Porter stemmer, stop words)",
    // Terms added through the query API (not the query-string parser, which reads ":" "~" "^" "+" "-").
    search: (text, k) =>
      index
        .query((q) => q.term(lunr.tokenizer(text)))
        .slice(0, k)
        .map((r) => Number(r.ref)),
  };
}
