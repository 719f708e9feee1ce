/**
 * The built-in verifier's model and its inference, per claim-abstract pair:
 * 1. a cheap selector (logistic regression on lexical features) ranks the abstract sentences; its top
 *    `candidates` are the rationale candidates;
 * 2. optionally (an ablation, off in the shipped model) a stance model on sentence-encoder + lexical features
 *    scores each candidate Supports / Refutes / NEI;
 * 3. a pair model (multinomial logistic regression on cues aggregated over all sentences, the probabilities of a
 *    pair-level TF-IDF model, tfidf-pair.ts, and rarity-weighted overlap, idf.ts) gives the pair's logits. There is
 *    one pair model per kind of abstract (one sentence, or more: claim-sentence pairs and scientific abstracts
 *    behave differently), each with its own temperature and class decision weights (tuned out of fold for
 *    weighted F1, with a penalty on calling NEI pairs Supports).
 * The decision weights are folded into the probabilities shown: p = softmax((logits / T + ln w) / T2), with T2
 * re-fitted out of fold, so the label is always the most probable class shown (one story per pair).
 */

import { softmaxWithTemperature } from "../learning/calibration.ts";
import { argmax } from "../learning/decision-weights.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { type Standardiser, standardise } from "../learning/standardise.ts";
import { LABELS, NEI } from "../types.ts";
import { type ClaimNarrative, type ClaimNarrativeJson, openClaimNarrative } from "./claim-narrative.ts";
import { contrastClaim } from "./contrast.ts";
import {
  bestCandidate,
  type CandidateScore,
  type Family,
  type PairGroup,
  pairFeatures,
  stanceFeatures,
} from "./features.ts";
import { type IdfJson, IdfTable, idfPairFeatures } from "./idf.ts";
import { lexicalFeatures, profile, type TextProfile } from "./lexical.ts";
import { type TfidfPairJson, TfidfPairModel } from "./tfidf-pair.ts";
import { probsFromArray, probsToArray, type Verdict } from "./verifier.ts";

export const MODEL_FORMAT = "climatecheck-verification/4";

/** Abstracts of one sentence (claim-sentence pairs) and longer ones get their own pair model. */
export type Kind = "single" | "multi";
export const KINDS: readonly Kind[] = ["single", "multi"];
export const kindOf = (sentences: number): Kind => (sentences === 1 ? "single" : "multi");

/** The pair model of one kind, with its calibration and decision. */
export interface PairPartJson {
  standardiser: Standardiser;
  model: LogisticJson;
  temperature: number;
  /** Decision weights (S, R, NEI), tuned out of fold; folded into the probabilities as ln w. */
  classWeights: [number, number, number];
  /** Temperature of the folded logits (logits / temperature + ln classWeights), re-fitted out of fold. */
  foldedTemperature: number;
}

/** ln w added to temperature-scaled logits: argmax of the result is the class-weighted argmax. */
export function foldedLogits(
  logits: ArrayLike<number>,
  temperature: number,
  weights: readonly number[],
): number[] {
  return Array.from(logits, (z, k) => z / temperature + Math.log(weights[k]));
}

/** The probabilities shown for a pair: decision weights folded in, then re-calibrated. */
export function partProbs(logits: ArrayLike<number>, part: PairPartJson): number[] {
  return softmaxWithTemperature(
    foldedLogits(logits, part.temperature, part.classWeights),
    part.foldedTemperature,
  );
}

export interface VerificationModelJson {
  format: typeof MODEL_FORMAT;
  /** Sentence encoder of the stance model; absent when the pair model has no stance group (no encoder at all). */
  encoder?: string;
  families: Family[];
  candidates: number;
  selector: LogisticJson;
  stance?: { standardiser: Standardiser; model: LogisticJson };
  /** Pair-level TF-IDF model whose probabilities feed the pair model (when its group is on). */
  tfidf?: TfidfPairJson;
  /** Document frequencies for the "idf" group. */
  idf?: IdfJson;
  pairGroups: PairGroup[];
  pairs: Record<Kind, PairPartJson>;
  /** The pair model of abstracts of the built-in corpus (train.ts builtinKind); absent in older models. */
  builtinPair?: PairPartJson;
  /** Direction check at inference (contrastGuard): a Supports pair is weighed against the claim's contrast. */
  contrastGuard?: boolean;
  /** The claim's P(narrative) for the "narrative" group: a gate on a narratives model's features (claim-narrative.ts). */
  narrative?: ClaimNarrativeJson;
}

/** A pair after the cheap step: lexical features of every sentence and the chosen candidates. */
export interface PreparedPair {
  claim: string;
  sentences: string[];
  title?: string;
  /** Pair-level TF-IDF probabilities, when the model has that group. */
  tfidf?: Float32Array;
  /** The "idf" group's features, when the model has that group. */
  idf?: number[];
  lexical: number[][];
  /** Candidate sentence indices, best selector score first, with that score. */
  candidates: { index: number; selector: number }[];
  /** An abstract of the built-in corpus: scored by the model's builtinPair when it has one. */
  builtin?: boolean;
}

/** Lexical features of each sentence and, given a table, the "idf" group of the pair. */
export function pairCues(
  claim: TextProfile,
  sentences: readonly TextProfile[],
  title?: TextProfile,
  idf?: IdfTable,
): { lexical: number[][]; idf?: number[] } {
  const lexical = sentences.map((s, i) => lexicalFeatures(claim, s, i, sentences.length));
  return { lexical, idf: idf && idfPairFeatures(idf, claim, sentences, lexical, title) };
}

export function lexicalMatrix(claim: TextProfile, sentences: readonly string[]): number[][] {
  return pairCues(claim, sentences.map(profile)).lexical;
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
  /** Pair logits of the kind's model, before temperature scaling (S, R, NEI). */
  logits: Float32Array;
  /** Per candidate: selector and, with a stance model, stance probabilities. */
  candidates: CandidateScore[];
  /** Sentences of the abstract (picks the kind). */
  sentences: number;
  /** Scored by the built-in corpus's pair model. */
  builtin?: boolean;
}

export class VerificationModel {
  readonly json: VerificationModelJson;
  readonly selector: LogisticModel;
  readonly stance?: LogisticModel;
  readonly pairs: Record<Kind, LogisticModel>;
  readonly builtinPair?: LogisticModel;
  readonly tfidf?: TfidfPairModel;
  readonly idf?: IdfTable;
  private claimNarrative?: Promise<ClaimNarrative>;

  /** `claimNarrative` replaces the narratives model the json names (tests, other models); read only when needed. */
  constructor(json: VerificationModelJson, claimNarrative?: ClaimNarrative) {
    if (json.format !== MODEL_FORMAT)
      throw new Error(`unsupported verification model format "${json.format}" (expected ${MODEL_FORMAT})`);
    this.json = json;
    this.selector = LogisticModel.fromJSON(json.selector);
    if (json.stance) this.stance = LogisticModel.fromJSON(json.stance.model);
    if (json.builtinPair) this.builtinPair = LogisticModel.fromJSON(json.builtinPair.model);
    this.pairs = {
      single: LogisticModel.fromJSON(json.pairs.single.model),
      multi: LogisticModel.fromJSON(json.pairs.multi.model),
    };
    if (json.tfidf) this.tfidf = new TfidfPairModel(json.tfidf);
    if (json.idf) this.idf = new IdfTable(json.idf);
    const needs: [PairGroup, unknown][] = [
      ["tfidf", this.tfidf],
      ["idf", this.idf],
      ["stance", this.stance && json.encoder],
    ];
    for (const [group, part] of needs)
      if (json.pairGroups.includes(group) && !part) throw new Error(`the pair model needs its ${group} part`);
    if (json.pairGroups.some((g) => g.startsWith("narrative")) && !json.narrative && !claimNarrative)
      throw new Error("the pair model needs its narrative part");
    if (claimNarrative) this.claimNarrative = Promise.resolve(claimNarrative);
  }

  get usesNarrative(): boolean {
    return this.json.pairGroups.some((g) => g.startsWith("narrative"));
  }

  /** The claims' P(narrative), from the narratives model (loaded on first use). */
  private async narratives(pairs: readonly PreparedPair[]): Promise<number[] | undefined> {
    if (!this.usesNarrative) return undefined;
    this.claimNarrative ??= openClaimNarrative(this.json.narrative as ClaimNarrativeJson);
    return (await this.claimNarrative)(pairs.map((p) => p.claim));
  }

  /** `builtin`: the abstract is one of the built-in corpus (PreparedPair.builtin). */
  prepare(claim: string, sentences: string[], title?: string, builtin?: boolean): PreparedPair {
    const { lexical, idf } = pairCues(
      profile(claim),
      sentences.map(profile),
      title ? profile(title) : undefined,
      this.idf,
    );
    return {
      claim,
      sentences,
      title,
      tfidf: this.tfidf?.probs({ claim, title, sentences }),
      idf,
      lexical,
      candidates: selectCandidates(this.selector, lexical, this.json.candidates),
      ...(builtin ? { builtin } : {}),
    };
  }

  /** Whether a prepared pair is scored by the built-in corpus's pair model (trained on all our pairs, any length). */
  usesBuiltinPair(p: Pick<PreparedPair, "builtin">): boolean {
    return p.builtin === true && this.json.builtinPair !== undefined;
  }

  /** Whether the pair model reads stance probabilities (otherwise the encoder is never called). */
  get usesEncoder(): boolean {
    return this.json.pairGroups.includes("stance");
  }

  private stanceProbs(u: Float32Array, v: Float32Array, lexical: readonly number[]): Float32Array {
    const stance = this.json.stance as NonNullable<VerificationModelJson["stance"]>;
    const x = standardise(stanceFeatures(this.json.families, u, v, lexical), stance.standardiser);
    return (this.stance as LogisticModel).predictProba(x);
  }

  /** Runs steps 2 and 3 for prepared pairs; with a stance model the encoder sees each distinct text once. */
  async score(pairs: readonly PreparedPair[], embed: Embed): Promise<PairOutput[]> {
    const narrative = await this.narratives(pairs);
    if (!this.usesEncoder) return pairs.map((p, i) => this.output(p, p.candidates, narrative?.[i]));
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
        ...c,
        stance: this.stanceProbs(u, vectors[plan[i].candidates[k]], p.lexical[c.index]),
      }));
      return this.output(p, candidates, narrative?.[i]);
    });
  }

  private output(p: PreparedPair, candidates: CandidateScore[], narrative?: number): PairOutput {
    const kind = kindOf(p.sentences.length);
    const builtin = this.usesBuiltinPair(p);
    const x = pairFeatures(this.json.families, this.json.pairGroups, {
      candidates,
      lexical: p.lexical,
      tfidf: p.tfidf,
      idf: p.idf,
      narrative,
    });
    return {
      logits:
        builtin && this.builtinPair && this.json.builtinPair
          ? this.builtinPair.decision(standardise(x, this.json.builtinPair.standardiser))
          : this.pairs[kind].decision(standardise(x, this.json.pairs[kind].standardiser)),
      candidates,
      sentences: p.sentences.length,
      ...(builtin ? { builtin } : {}),
    };
  }

  /**
   * Verdicts of prepared pairs (with their scored outputs): score, decide, then, when the model has the direction
   * check, weigh each Supports pair against its contrast claim (contrastGuard).
   */
  async verdicts(
    prepared: readonly PreparedPair[],
    embed: Embed,
  ): Promise<{ verdicts: Verdict[]; outputs: PairOutput[] }> {
    const outputs = await this.score(prepared, embed);
    const verdicts = outputs.map((o) => this.verdict(o));
    if (!this.json.contrastGuard) return { verdicts, outputs };
    const guarded: number[] = [];
    const contrasts: PreparedPair[] = [];
    verdicts.forEach((v, i) => {
      const c = guardedLabel(v.label, prepared[i].sentences.length)
        ? contrastClaim(prepared[i].claim)
        : undefined;
      if (c === undefined) return;
      guarded.push(i);
      contrasts.push(this.prepare(c, prepared[i].sentences, prepared[i].title, prepared[i].builtin));
    });
    const scored = await this.score(contrasts, embed);
    guarded.forEach((i, k) => {
      verdicts[i] = contrastGuard(verdicts[i], this.verdict(scored[k]).probs, outputs[i].candidates);
    });
    return { verdicts, outputs };
  }

  /** Calibrated probabilities, the label decision and the rationale of one scored pair. */
  verdict(out: PairOutput): Verdict {
    const part =
      out.builtin && this.json.builtinPair ? this.json.builtinPair : this.json.pairs[kindOf(out.sentences)];
    const p = partProbs(out.logits, part);
    const k = argmax(p);
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
 * Which labels the direction check weighs: Supports always; Refutes on abstracts of more than one sentence, where a
 * negated claim was refuted by abstracts that say what it says (SciFact writes its refuted claims as negations).
 * On train pairs the Refutes check halved the Refutes given the opposite way on SciFact (108 to 59) and on our
 * written claims (132 to 68); on Climate-FEVER's one-sentence evidence it cost a third of the right ones.
 */
const guardedLabel = (label: Verdict["label"], sentences: number) =>
  label === "Supports" || (label === "Refutes" && kindOf(sentences) === "multi");

/**
 * The direction check: a text that supports (or refutes) a claim's contrast (contrast.ts) at least as much as the
 * claim cannot tell which way the claim goes, so half of P(label) (the half that belongs to the contrast) moves to
 * NEI; the label is again the most probable class. A text that prefers the claim is left as it is. (The Supports
 * rule was chosen on train pairs among four rules, BENCHMARKS.md "Verdicts a fact-checker can trust".)
 */
export function contrastGuard(
  v: Verdict,
  contrast: Verdict["probs"],
  candidates: readonly CandidateScore[],
): Verdict {
  const c = LABELS.indexOf(v.label);
  const own = probsToArray(v.probs);
  if (v.label === NEI || probsToArray(contrast)[c] < own[c]) return v;
  const p = [...own];
  p[c] -= own[c] / 2;
  p[LABELS.indexOf(NEI)] += own[c] / 2;
  const k = argmax(p);
  const label = LABELS[k];
  return { label, confidence: p[k], probs: probsFromArray(p), rationale: rationaleFor(label, candidates) };
}

/**
 * The sentences that justify the label, none for NEI. Always the best candidate (least NEI with a stance model,
 * else the selector's first); with stance, also candidates whose own stance prefers the label over NEI; without,
 * also candidates the selector itself calls more likely rationale than not.
 */
export function rationaleFor(label: Verdict["label"], candidates: readonly CandidateScore[]): number[] {
  if (label === NEI) return [];
  const k = LABELS.indexOf(label);
  const picked = new Set([bestCandidate(candidates).index]);
  for (const c of candidates) {
    if (c.stance ? c.stance[k] > c.stance[2] : c.selector >= 0.5) picked.add(c.index);
  }
  return [...picked].sort((a, b) => a - b);
}
