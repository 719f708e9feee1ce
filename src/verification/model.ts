/**
 * The built-in verifier's model and its inference, in three steps per claim-abstract pair:
 * 1. a cheap selector (logistic regression on lexical features) ranks the abstract sentences and keeps the top
 *    `candidates` (the sentence encoder is the costly part, so only those are encoded);
 * 2. a stance model (multinomial logistic regression on encoder + lexical features) scores each candidate
 *    Supports / Refutes / NEI;
 * 3. a pair model (multinomial logistic regression on the candidates' stance probabilities, lexical cues of the
 *    best candidate and of all sentences, and the probabilities of a pair-level TF-IDF model, tfidf-pair.ts) gives
 *    the pair's logits, which are temperature-scaled; the label is the class-weighted argmax (weights tuned out of
 *    fold for weighted F1, with a penalty on calling NEI pairs Supports).
 */

import { softmaxWithTemperature } from "../learning/calibration.ts";
import { weightedArgmax } from "../learning/decision-weights.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { type Standardiser, standardise } from "../learning/standardise.ts";
import { LABELS, NEI } from "../types.ts";
import {
  bestCandidate,
  type CandidateScore,
  type Family,
  type PairGroup,
  pairFeatures,
  stanceFeatures,
} from "./features.ts";
import { lexicalFeatures, profile, type TextProfile } from "./lexical.ts";
import { type TfidfPairJson, TfidfPairModel } from "./tfidf-pair.ts";
import { probsFromArray, type Verdict } from "./verifier.ts";

export const MODEL_FORMAT = "climatecheck-verification/2";

export interface VerificationModelJson {
  format: typeof MODEL_FORMAT;
  /** Sentence encoder the stance model was trained with (its vectors are not interchangeable). */
  encoder: string;
  families: Family[];
  candidates: number;
  selector: LogisticJson;
  stance: { standardiser: Standardiser; model: LogisticJson };
  /** Pair-level TF-IDF model whose probabilities feed the pair model (when its group is on). */
  tfidf?: TfidfPairJson;
  pairGroups: PairGroup[];
  pair: { standardiser: Standardiser; model: LogisticJson };
  temperature: number;
  /** Decision: argmax of weight x calibrated probability (S, R, NEI). */
  classWeights: [number, number, number];
  /** The same for one-sentence abstracts (claim-sentence pairs behave differently). */
  classWeightsSingle: [number, number, number];
  /** Cheap first pass that settles clear NEI pairs without the encoder (speed). */
  cascade?: CascadeJson;
}

/** A pair model without the stance group; pairs it calls NEI with probability >= neiThreshold skip the encoder. */
export interface CascadeJson {
  pairGroups: PairGroup[];
  pair: { standardiser: Standardiser; model: LogisticJson };
  temperature: number;
  neiThreshold: number;
}

/** A pair after the cheap step: lexical features of every sentence and the chosen candidates. */
export interface PreparedPair {
  claim: string;
  sentences: string[];
  /** Pair-level TF-IDF probabilities, when the model has that group. */
  tfidf?: Float32Array;
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
  /** Sentences of the abstract (picks the decision weights). */
  sentences: number;
  /** Settled by the cascade's cheap pass (its logits, its temperature; the label is NEI). */
  early?: boolean;
}

export class VerificationModel {
  readonly json: VerificationModelJson;
  readonly selector: LogisticModel;
  readonly stance: LogisticModel;
  readonly pair: LogisticModel;
  readonly tfidf?: TfidfPairModel;
  readonly cascade?: LogisticModel;

  constructor(json: VerificationModelJson) {
    if (json.format !== MODEL_FORMAT)
      throw new Error(`unsupported verification model format "${json.format}"`);
    this.json = json;
    this.selector = LogisticModel.fromJSON(json.selector);
    this.stance = LogisticModel.fromJSON(json.stance.model);
    this.pair = LogisticModel.fromJSON(json.pair.model);
    if (json.tfidf) this.tfidf = new TfidfPairModel(json.tfidf);
    if (json.cascade) this.cascade = LogisticModel.fromJSON(json.cascade.pair.model);
    if (json.pairGroups.includes("tfidf") && !this.tfidf)
      throw new Error("the pair model needs its tfidf part");
  }

  prepare(claim: string, sentences: string[], title?: string): PreparedPair {
    const lexical = lexicalMatrix(profile(claim), sentences);
    return {
      claim,
      sentences,
      tfidf: this.tfidf?.probs({ claim, title, sentences }),
      lexical,
      candidates: selectCandidates(this.selector, lexical, this.json.candidates),
    };
  }

  stanceProbs(u: Float32Array, v: Float32Array, lexical: readonly number[]): Float32Array {
    const x = standardise(stanceFeatures(this.json.families, u, v, lexical), this.json.stance.standardiser);
    return this.stance.predictProba(x);
  }

  /** Whether the pair model reads stance probabilities (otherwise the encoder is never called). */
  get usesEncoder(): boolean {
    return this.json.pairGroups.includes("stance");
  }

  /** Runs steps 2 and 3 for prepared pairs; the encoder sees each distinct claim and candidate once. */
  async score(pairs: readonly PreparedPair[], embed: Embed): Promise<PairOutput[]> {
    const out: PairOutput[] = new Array(pairs.length);
    const rest: number[] = [];
    const cascade = this.json.cascade;
    pairs.forEach((p, i) => {
      if (!this.usesEncoder) {
        out[i] = this.cheap(p, this.pair, this.json);
      } else if (cascade && this.cascade) {
        const o = this.cheap(p, this.cascade, cascade);
        const nei = softmaxWithTemperature(o.logits, cascade.temperature)[2];
        if (nei >= cascade.neiThreshold) out[i] = { ...o, early: true };
        else rest.push(i);
      } else rest.push(i);
    });
    if (rest.length === 0) return out;
    const texts = new Map<string, number>();
    const slot = (t: string) => {
      const known = texts.get(t);
      if (known !== undefined) return known;
      texts.set(t, texts.size);
      return texts.size - 1;
    };
    const plan = rest.map((i) => ({
      claim: slot(pairs[i].claim),
      candidates: pairs[i].candidates.map((c) => slot(pairs[i].sentences[c.index])),
    }));
    const vectors = await embed([...texts.keys()]);
    rest.forEach((i, r) => {
      const p = pairs[i];
      const u = vectors[plan[r].claim];
      const candidates = p.candidates.map((c, k) => ({
        index: c.index,
        selector: c.selector,
        stance: this.stanceProbs(u, vectors[plan[r].candidates[k]], p.lexical[c.index]),
      }));
      const x = pairFeatures(this.json.families, this.json.pairGroups, {
        candidates,
        lexical: p.lexical,
        tfidf: p.tfidf,
      });
      out[i] = {
        logits: this.pair.decision(standardise(x, this.json.pair.standardiser)),
        candidates,
        sentences: p.sentences.length,
      };
    });
    return out;
  }

  /** A pair model without the stance group: candidates keep selector order and count as NEI for the rationale. */
  private cheap(
    p: PreparedPair,
    model: LogisticModel,
    part: { pairGroups: PairGroup[]; pair: { standardiser: Standardiser } },
  ): PairOutput {
    const candidates = p.candidates.map((c) => ({ ...c, stance: Float32Array.of(0, 0, 1) }));
    const x = pairFeatures(this.json.families, part.pairGroups, {
      candidates,
      lexical: p.lexical,
      tfidf: p.tfidf,
    });
    return {
      logits: model.decision(standardise(x, part.pair.standardiser)),
      candidates,
      sentences: p.sentences.length,
    };
  }

  /** Calibrated probabilities, the label decision and the rationale of one scored pair. */
  verdict(out: PairOutput): Verdict {
    if (out.early && this.json.cascade) {
      const p = softmaxWithTemperature(out.logits, this.json.cascade.temperature);
      return { label: NEI, confidence: p[2], probs: probsFromArray(p), rationale: [] };
    }
    const p = softmaxWithTemperature(out.logits, this.json.temperature);
    const k = weightedArgmax(p, out.sentences === 1 ? this.json.classWeightsSingle : this.json.classWeights);
    const label = LABELS[k];
    return {
      label,
      confidence: p[k],
      probs: probsFromArray(p),
      rationale: rationaleFor(label, out.candidates),
    };
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
