/**
 * Cheap claim-sentence features: lexical overlap, polarity (negation, null results, direction words, antonyms),
 * hedges and numbers. They pick candidate rationale sentences before the sentence encoder runs and feed the
 * stance model beside the encoder features.
 */
import { contentTokens, tokenize } from "../text/tokenize.ts";
import { ANTONYMS, DIRECTION, HEDGES, NEGATIONS, NULL_RESULT } from "./lexicon.ts";

/** What the features need from one text, computed once per claim and once per sentence. */
export interface TextProfile {
  tokens: string[];
  /** Content tokens cut to a short prefix, so inflections match ("decreases" ~ "decreased"). */
  keys: Set<string>;
  keyList: string[];
  bigrams: Set<string>;
  numbers: Set<string>;
  negations: number;
  nullResult: number;
  /** Sum of direction words (+1 up, -1 down). */
  direction: number;
  hedges: number;
}

const NUMBER = /^\d+(?:[.,]\d+)?$/;

/** Prefix key used for fuzzy token matching. */
export function matchKey(token: string): string {
  return token.length > 6 ? token.slice(0, 6) : token;
}

/** profile() with a memo, so a text seen in many pairs is profiled once; `profiles` are the distinct ones so far. */
export function profileMemo(): { of: (text: string) => TextProfile; profiles: () => Iterable<TextProfile> } {
  const memo = new Map<string, TextProfile>();
  return {
    of(text) {
      const known = memo.get(text);
      if (known) return known;
      const p = profile(text);
      memo.set(text, p);
      return p;
    },
    profiles: () => memo.values(),
  };
}

export function profile(text: string): TextProfile {
  const tokens = tokenize(text);
  const content = contentTokens(text);
  const keyList = content.map(matchKey);
  const bigrams = new Set<string>();
  for (let i = 1; i < keyList.length; i++) bigrams.add(`${keyList[i - 1]} ${keyList[i]}`);
  let negations = 0;
  let nullResult = 0;
  let direction = 0;
  let hedges = 0;
  const numbers = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (NEGATIONS.has(t)) negations++;
    if (HEDGES.has(t)) hedges++;
    direction += DIRECTION.get(t) ?? 0;
    if (NUMBER.test(t)) numbers.add(t.replace(",", "."));
    const next = tokens[i + 1];
    if (next !== undefined && NULL_RESULT.some(([a, b]) => a === t && b === next)) nullResult++;
  }
  return {
    tokens,
    keys: new Set(keyList),
    keyList,
    bigrams,
    numbers,
    negations,
    nullResult,
    direction,
    hedges,
  };
}

/** Feature families, in vector order; ablations switch whole families off. */
export const LEXICAL_FAMILIES = {
  overlap: ["recall", "precision", "bigram_recall", "log_len", "recall_sq"],
  polarity: [
    "claim_neg",
    "sent_neg",
    "neg_mismatch",
    "neg_mismatch_x_recall",
    "sent_null",
    "sent_null_x_recall",
    "dir_agree",
    "dir_disagree",
    "dir_disagree_x_recall",
    "antonym",
    "antonym_x_recall",
  ],
  hedges: ["sent_hedge", "claim_hedge"],
  numbers: ["claim_has_num", "num_recall", "num_mismatch"],
  position: ["position", "is_last", "is_first"],
} as const;

export type LexicalFamily = keyof typeof LEXICAL_FAMILIES;

export const LEXICAL_NAMES: readonly string[] = Object.values(LEXICAL_FAMILIES).flat();

const sign = (x: number) => (x > 0 ? 1 : x < 0 ? -1 : 0);

/** The lexical feature vector of (claim, sentence at `index` of `count` sentences), in LEXICAL_NAMES order. */
export function lexicalFeatures(
  claim: TextProfile,
  sent: TextProfile,
  index: number,
  count: number,
): number[] {
  const ck = claim.keys;
  let hit = 0;
  for (const k of ck) if (sent.keys.has(k)) hit++;
  const recall = ck.size ? hit / ck.size : 0;
  let shit = 0;
  for (const k of sent.keys) if (ck.has(k)) shit++;
  const precision = sent.keys.size ? shit / sent.keys.size : 0;
  let bhit = 0;
  for (const b of claim.bigrams) if (sent.bigrams.has(b)) bhit++;
  const bigramRecall = claim.bigrams.size ? bhit / claim.bigrams.size : 0;

  const claimNeg = claim.negations > 0 ? 1 : 0;
  const sentNeg = sent.negations > 0 ? 1 : 0;
  const negMismatch = claimNeg !== sentNeg ? 1 : 0;
  const sentNull = sent.nullResult > 0 ? 1 : 0;
  const dir = sign(claim.direction) * sign(sent.direction);
  let antonym = 0;
  const sentTokens = new Set(sent.tokens);
  for (const t of claim.tokens) {
    const opposite = ANTONYMS.get(t);
    if (opposite && !sentTokens.has(t)) for (const o of opposite) if (sentTokens.has(o)) antonym = 1;
  }

  let numHit = 0;
  for (const n of claim.numbers) if (sent.numbers.has(n)) numHit++;
  const claimHasNum = claim.numbers.size > 0 ? 1 : 0;
  const numRecall = claim.numbers.size ? numHit / claim.numbers.size : 0;
  const numMismatch = claimHasNum && sent.numbers.size > 0 && numHit === 0 ? 1 : 0;

  return [
    recall,
    precision,
    bigramRecall,
    Math.log1p(sent.tokens.length) / 4,
    recall * recall,
    claimNeg,
    sentNeg,
    negMismatch,
    negMismatch * recall,
    sentNull,
    sentNull * recall,
    dir > 0 ? 1 : 0,
    dir < 0 ? 1 : 0,
    dir < 0 ? recall : 0,
    antonym,
    antonym * recall,
    sent.hedges > 0 ? 1 : 0,
    claim.hedges > 0 ? 1 : 0,
    claimHasNum,
    numRecall,
    numMismatch,
    count > 1 ? index / (count - 1) : 0,
    index === count - 1 ? 1 : 0,
    index === 0 ? 1 : 0,
  ];
}
