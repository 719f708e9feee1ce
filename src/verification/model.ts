/**
 * The built-in verifier's model and its inference, in three steps per claim-abstract pair:
 * 1. a cheap selector (logistic regression on lexical features) ranks the abstract sentences and keeps the top
 *    `candidates` (the sentence encoder is the costly part, so only those are encoded);
 * 2. a stance model (multinomial logistic regression on encoder + lexical features) scores each candidate
 *    Supports / Refutes / NEI;
 * 3. a pair model (multinomial logistic regression on the candidates' stance probabilities) gives the pair's
 *    logits, which are temperature-scaled; weak Supports/Refutes below `minConfidence` become NEI.
 */

import { softmaxWithTemperature } from "../learning/calibration.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { type Standardiser, standardise } from "../learning/standardise.ts";
import { LABELS, NEI } from "../types.ts";
import { bestCandidate, type CandidateScore, type Family, pairFeatures, stanceFeatures } from "./features.ts";
import { lexicalFeatures, profile, type TextProfile } from "./lexical.ts";
import { decide, probsFromArray, type Verdict } from "./verifier.ts";

export const MODEL_FORMAT = "climatecheck-verification/1";

export interface VerificationModelJson {
  format: typeof MODEL_FORMAT;
  /** Sentence encoder the stance model was trained with (its vectors are not interchangeable). */
  encoder: string;
  families: Family[];
  candidates: number;
  selector: LogisticJson;
  stance: { standardiser: Standardiser; model: LogisticJson };
  pair: LogisticJson;
  temperature: number;
  minConfidence: number;
}

/** A pair after the cheap step: lexical features of every sentence and the chosen candidates. */
export interface PreparedPair {
  claim: string;
  sentences: string[];
  lexical: number[][];
  /** Candidate sentence indices, best selector score first, with that score. */
  candidates: { index: number; selector: number }[];
}

export function lexicalMatrix(claim: TextProfile, sentences: readonly string[]): number[][] {
  return sentences.map((s, i) => lexicalFeatures(claim, profile(s), i, sentences.length));
}

/** The top-k sentences by selector probability (ties: earlier sentence first). */
export function selectCandidates(
  selector: LogisticModel,
  lexical: readonly number[][],
  k: number,
): { index: number; selector: number }[] {
  return lexical
    .map((x, index) => ({ index, selector: selector.predictProba(Float32Array.from(x))[1] }))
    .sort((a, b) => b.selector - a.selector || a.index - b.index)
    .slice(0, Math.max(1, k));
}

export type Embed = (texts: string[]) => Promise<Float32Array[]>;

export interface PairOutput {
  /** Pair logits before temperature scaling (S, R, NEI). */
  logits: Float32Array;
  /** Per candidate: selector and stance probabilities. */
  candidates: CandidateScore[];
}

export class VerificationModel {
  readonly json: VerificationModelJson;
  readonly selector: LogisticModel;
  readonly stance: LogisticModel;
  readonly pair: LogisticModel;

  constructor(json: VerificationModelJson) {
    if (json.format !== MODEL_FORMAT)
      throw new Error(`unsupported verification model format "${json.format}"`);
    this.json = json;
    this.selector = LogisticModel.fromJSON(json.selector);
    this.stance = LogisticModel.fromJSON(json.stance.model);
    this.pair = LogisticModel.fromJSON(json.pair);
  }

  prepare(claim: string, sentences: string[]): PreparedPair {
    const lexical = lexicalMatrix(profile(claim), sentences);
    return {
      claim,
      sentences,
      lexical,
      candidates: selectCandidates(this.selector, lexical, this.json.candidates),
    };
  }

  stanceProbs(u: Float32Array, v: Float32Array, lexical: readonly number[]): Float32Array {
    const x = standardise(stanceFeatures(this.json.families, u, v, lexical), this.json.stance.standardiser);
    return this.stance.predictProba(x);
  }

  /** Runs steps 2 and 3 for prepared pairs; the encoder sees each distinct claim and candidate once. */
  async score(pairs: readonly PreparedPair[], embed: Embed): Promise<PairOutput[]> {
    const texts = new Map<string, number>();
    const slot = (t: string) => {
      const known = texts.get(t);
      if (known !== undefined) return known;
      texts.set(t, texts.size);
      return texts.size - 1;
    };
    const plan = pairs.map((p) => ({
      claim: slot(p.claim),
      candidates: p.candidates.map((c) => slot(p.sentences[c.index])),
    }));
    const vectors = await embed([...texts.keys()]);
    return pairs.map((p, i) => {
      const u = vectors[plan[i].claim];
      const candidates = p.candidates.map((c, k) => ({
        index: c.index,
        selector: c.selector,
        stance: this.stanceProbs(u, vectors[plan[i].candidates[k]], p.lexical[c.index]),
      }));
      const x = pairFeatures(this.json.families, candidates, p.sentences.length, (j) => p.lexical[j]);
      return { logits: this.pair.decision(x), candidates };
    });
  }

  /** Calibrated probabilities, the label decision and the rationale of one scored pair. */
  verdict(out: PairOutput): Verdict {
    const probs = probsFromArray(softmaxWithTemperature(out.logits, this.json.temperature));
    const { label, confidence } = decide(probs, this.json.minConfidence);
    return { label, confidence, probs, rationale: rationaleFor(label, out.candidates) };
  }
}

/**
 * The sentences that justify the label: candidates whose own stance prefers the label over NEI, and always the
 * least-NEI candidate; none for NEI.
 */
export function rationaleFor(label: Verdict["label"], candidates: readonly CandidateScore[]): number[] {
  if (label === NEI) return [];
  const k = LABELS.indexOf(label);
  const picked = new Set([bestCandidate(candidates).index]);
  for (const c of candidates) if (c.stance[k] > c.stance[2]) picked.add(c.index);
  return [...picked].sort((a, b) => a - b);
}
