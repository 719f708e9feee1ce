/**
 * The USE-lite SentencePiece tokenizer, same output as @energetic-ai/embeddings' Tokenizer but linear in the text
 * length: the package copies the rest of the text at every position (quadratic), which cost ~25 ms per abstract.
 */

/** The model's vocabulary file: [piece, log-probability] in id order. */
export type UseLiteVocabulary = Array<[string, number]>;

/** The package skips ids 0-5 (unknown, <s>, </s>, extra ids) when it builds its trie. */
const RESERVED = 6;
const UNKNOWN = 0;

interface TrieNode {
  children: Map<string, TrieNode>;
  /** Vocabulary id when a piece ends here, else -1. */
  id: number;
  score: number;
}

const newNode = (): TrieNode => ({ children: new Map(), id: -1, score: 0 });

export function createUseLiteTokenizer(vocabulary: UseLiteVocabulary): (text: string) => number[] {
  const root = newNode();
  for (let id = RESERVED; id < vocabulary.length; id++) {
    let node = root;
    for (const symbol of vocabulary[id][0]) {
      let next = node.children.get(symbol);
      if (!next) {
        next = newNode();
        node.children.set(symbol, next);
      }
      node = next;
    }
    node.id = id;
    node.score = vocabulary[id][1];
  }
  // The backtrack steps by the piece's UTF-16 length, as the package does.
  const pieceLength = vocabulary.map(([piece]) => piece.length);

  return function encode(text: string): number[] {
    const normalized = text.normalize("NFKC");
    if (normalized.length === 0) return [];
    const symbols = Array.from(`▁${normalized.replace(/ /g, "▁")}`);
    const n = symbols.length;
    // Viterbi, relaxing forward in order of start position: the same update order as the package's backward loop,
    // including its quirk that a best score of exactly 0 counts as "not set yet".
    const best = new Float64Array(n + 1);
    const words = new Int32Array(n + 1);
    const relax = (end: number, score: number, id: number) => {
      if (best[end] === 0 || score >= best[end]) {
        best[end] = score;
        words[end] = id;
      }
    };
    for (let start = 0; start < n; start++) {
      let node = root.children.get(symbols[start]);
      let matched = false;
      for (let j = start; node !== undefined; ) {
        if (node.id >= 0) {
          matched = true;
          relax(j + 1, node.score + best[start], node.id);
        }
        j++;
        if (j >= n) break;
        node = node.children.get(symbols[j]);
      }
      if (!matched) relax(start + 1, best[start], UNKNOWN);
    }
    const ids: number[] = [];
    for (let at = n; at > 0; at -= pieceLength[words[at]]) ids.push(words[at]);
    // Runs of unknown pieces collapse into one.
    const merged: number[] = [];
    for (let i = ids.length - 1; i >= 0; i--) {
      if (ids[i] === UNKNOWN && merged.length > 0 && merged[merged.length - 1] === UNKNOWN) continue;
      merged.push(ids[i]);
    }
    return merged;
  };
}
