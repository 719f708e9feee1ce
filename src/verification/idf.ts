/**
 * Rarity-weighted overlap between a claim and an abstract. Plain overlap counts "increase" as much as "ALDH1";
 * weighting each claim key by its inverse document frequency lets the pair model tell an abstract that names the
 * claim's specific entities from one that only shares its topic words (SciFact's similar non-evidence abstracts).
 * The "idf" pair group also carries the polarity cues of the sentence with the best weighted overlap.
 */
import { LEXICAL_NAMES, type TextProfile } from "./lexical.ts";

export interface IdfJson {
  /** Documents the table was counted on. */
  documents: number;
  /** Match keys (see lexical.ts matchKey) seen in at least two documents, with their document frequency. */
  keys: Record<string, number>;
}

/** Smoothed idf, ln((1 + n) / (1 + df)) + 1; keys outside the table count as seen once (rare). */
export class IdfTable {
  readonly json: IdfJson;
  private readonly df: Map<string, number>;

  constructor(json: IdfJson) {
    this.json = json;
    this.df = new Map(Object.entries(json.keys));
  }

  /** Counts each text's distinct keys once; keys seen only once are left out (they get the unseen weight). */
  static fit(profiles: Iterable<Pick<TextProfile, "keys">>): IdfTable {
    const df = new Map<string, number>();
    let documents = 0;
    for (const p of profiles) {
      documents++;
      for (const k of p.keys) df.set(k, (df.get(k) ?? 0) + 1);
    }
    const keys: Record<string, number> = {};
    for (const [k, n] of [...df].sort((a, b) => (a[0] < b[0] ? -1 : 1))) if (n >= 2) keys[k] = n;
    return new IdfTable({ documents, keys });
  }

  weight(key: string): number {
    return Math.log((1 + this.json.documents) / (1 + (this.df.get(key) ?? 1))) + 1;
  }
}

/** A claim key this rare or rarer that the abstract never mentions is a strong hint of another subject. */
const RARE_IDF = 5;

const POLARITY_OF_BEST = [
  "claim_neg",
  "sent_neg",
  "neg_mismatch",
  "neg_mismatch_x_recall",
  "sent_null",
  "dir_agree",
  "dir_disagree",
  "antonym",
  "sent_hedge",
  "claim_hedge",
  "num_recall",
  "num_mismatch",
  "position",
].map((n) => LEXICAL_NAMES.indexOf(n));

export const IDF_FEATURES = [
  "best",
  "second",
  "abstract",
  "max_missing",
  "missing_rare",
  "top2",
  "best_sq",
  "log_sentences",
  ...POLARITY_OF_BEST.map((slot) => `best_${LEXICAL_NAMES[slot]}`),
] as const;

/**
 * The "idf" pair group: weighted recall of the claim's keys in the best and second-best sentence, in the whole
 * abstract (title included) and in the best two sentences together; the rarest claim key the abstract lacks and
 * how many rare ones it lacks; then the polarity cues (lexical features) of the best sentence.
 */
export function idfPairFeatures(
  table: IdfTable,
  claim: Pick<TextProfile, "keys">,
  sentences: readonly Pick<TextProfile, "keys">[],
  lexical: readonly (readonly number[])[],
  title?: Pick<TextProfile, "keys">,
): number[] {
  const keys = [...claim.keys];
  const w = keys.map((k) => table.weight(k));
  const total = w.reduce((a, b) => a + b, 0) || 1;
  const recallIn = (has: (k: string) => boolean) =>
    keys.reduce((a, k, i) => a + (has(k) ? w[i] : 0), 0) / total;
  const per = sentences.map((s) => recallIn((k) => s.keys.has(k)));
  const order = per.map((_, i) => i).sort((a, b) => per[b] - per[a] || a - b);
  const [first, second] = order;
  const inAbstract = (k: string) => sentences.some((s) => s.keys.has(k)) || (title?.keys.has(k) ?? false);
  let maxMissing = 0;
  let missingRare = 0;
  keys.forEach((k, i) => {
    if (inAbstract(k)) return;
    maxMissing = Math.max(maxMissing, w[i]);
    if (w[i] > RARE_IDF) missingRare++;
  });
  const top2 =
    second === undefined
      ? per[first]
      : recallIn((k) => sentences[first].keys.has(k) || sentences[second].keys.has(k));
  const best = per[first] ?? 0;
  return [
    best,
    second === undefined ? 0 : per[second],
    recallIn(inAbstract),
    maxMissing / 10,
    Math.min(missingRare, 3),
    top2 ?? 0,
    best * best,
    Math.log(Math.max(1, sentences.length)) / 3,
    ...POLARITY_OF_BEST.map((slot) => (first === undefined ? 0 : lexical[first][slot])),
  ];
}
