/**
 * The adapted Ev2R score of ClimateCheck 2026 (section 5.2, appendix C) and the automatic verification of
 * unannotated pairs. Gold labels only cover the abstracts the annotators saw; these scores give credit to a
 * retrieved abstract outside the gold by comparing it with the claim's gold abstracts (reference part, atomic
 * facts) and by asking a verifier whether it carries the gold label (proxy part).
 *
 * For a claim c with gold abstracts G_c and a retrieved abstract r not in G_c:
 * - F1(r, g): precision = share of r's atomic facts supported by g, recall = share of g's facts supported by r.
 * - S_ref(r) = max over g of F1(r, g); g* = the argmax, the first gold abstract (gold file order) on ties;
 *   y* = the gold label of g*.
 * - S_proxy(r) = P(y* | c, r) from the verifier; Ev2R(r) = (S_ref + S_proxy) / 2.
 * - A claim scores the maximum Ev2R over its unannotated retrieved abstracts; the submission score is the mean
 *   over claims with at least one non-NEI gold abstract and at least one unannotated retrieved abstract.
 * - S_ver(r) = (P(y^ | c, r) + [y^ = y*]) / 2 for the run's predicted label y^; reported as the mean over pairs.
 * Judge and verifier are injected, so tests run on deterministic ones and the CLI on the built-in or an LLM.
 */
import { type Label, type LabelledPair, NEI, type Task1Prediction } from "../types.ts";
import type { LabelProbs, Verifier, VerifyPair } from "../verification/verifier.ts";
import { goldByClaim, rankings } from "./metrics.ts";

/** An abstract as judges and verifiers read it. */
export type AbstractText = Pick<VerifyPair, "abstract" | "title" | "sentences">;

/** Decomposes texts into atomic facts and decides which facts a text supports. */
export interface Judge {
  /** Judge, model and prompt version: part of every cache key, and printed with the scores. */
  readonly name: string;
  /** How the judge departs from the paper's atomic-fact judge, printed with the scores; undefined if it does not. */
  readonly approximation?: string;
  atomicFacts(doc: AbstractText): Promise<string[]>;
  /** One verdict per fact, in order: is the fact supported by the evidence? */
  supported(facts: readonly string[], evidence: AbstractText): Promise<boolean[]>;
}

export interface Ev2rInput {
  /** Claim id -> claim text; every scored claim needs one. */
  claims: ReadonlyMap<string, string>;
  gold: readonly LabelledPair[];
  predictions: readonly Task1Prediction[];
  /** Abstract id -> text, for every gold abstract and every unannotated retrieved abstract of a scored claim. */
  abstracts: ReadonlyMap<string, AbstractText>;
  judge: Judge;
  verifier: Pick<Verifier, "name" | "verifyPairs">;
  /** Claims judged at once (their judge calls overlap; the chat client bounds the requests in flight). */
  concurrency?: number;
  /** Called after each claim with the unannotated pairs done so far and their total. */
  onProgress?: (done: number, total: number) => void;
}

/** One unannotated (claim, retrieved abstract) pair, with everything needed to audit its score. */
export interface Ev2rPair {
  claimId: string;
  abstractId: string;
  rank: number;
  /** g*: the best-aligned gold abstract, and y*, its gold label. */
  bestGold: string;
  bestGoldLabel: Label;
  precision: number;
  recall: number;
  sRef: number;
  sProxy: number;
  ev2r: number;
  /** y^ from the predictions' label column, null when the row has none. */
  predicted: Label | null;
  /** P(y^ | c, r), null without y^. */
  pPredicted: number | null;
  sVer: number | null;
}

export interface Ev2rExclusions {
  /** Gold claims whose gold abstracts are all Not Enough Information (excluded as in the paper). */
  all_nei: number;
  /** Gold claims without any prediction. */
  no_predictions: number;
  /** Gold claims whose retrieved abstracts are all in the gold. */
  all_retrieved_annotated: number;
}

export interface Ev2rScores {
  /** Mean over scored claims of the claim's best Ev2R; null when no claim qualifies. */
  ev2r: number | null;
  ev2r_claims: number;
  /** Means over scored claims of the two halves of each claim's best pair: ev2r = (ref + proxy) / 2. */
  ev2r_ref: number | null;
  ev2r_proxy: number | null;
  /** Unannotated pairs scored (all of them, not only each claim's best). */
  ev2r_pairs: number;
  ev2r_excluded: Ev2rExclusions;
  ev2r_judge: string;
  ev2r_verifier: string;
  /** The judge's approximation of the paper's method, or null for an atomic-fact judge. */
  ev2r_approximation: string | null;
  /** Mean S_ver over the unannotated pairs with a predicted label; null (with a note) when there are none. */
  auto_verification: number | null;
  auto_verification_pairs: number;
  /** Means of the two halves of S_ver: P(y^ | c, r) and [y^ = y*]. */
  auto_verification_prob: number | null;
  auto_verification_agreement: number | null;
  auto_verification_note: string | null;
}

export interface Ev2rResult {
  scores: Ev2rScores;
  pairs: Ev2rPair[];
}

export const probOf = (probs: LabelProbs, label: Label): number =>
  label === "Supports" ? probs.supports : label === "Refutes" ? probs.refutes : probs.nei;

/** Harmonic mean; 0 when both are 0. */
export const f1 = (p: number, r: number): number => (p + r === 0 ? 0 : (2 * p * r) / (p + r));

const share = (flags: readonly boolean[]): number =>
  flags.length === 0 ? 0 : flags.filter(Boolean).length / flags.length;

const meanOf = (xs: readonly number[]): number | null =>
  xs.length === 0 ? null : xs.reduce((s, x) => s + x, 0) / xs.length;

/** A claim to score: its gold abstracts in gold file order and its unannotated retrieved abstracts in rank order. */
export interface Ev2rClaim {
  claimId: string;
  gold: { id: string; label: Label }[];
  unannotated: Task1Prediction[];
}

/** Which claims are scored and which are left out (and why); pure, so callers can load just the texts needed. */
export function planEv2r(
  gold: readonly LabelledPair[],
  predictions: readonly Task1Prediction[],
): { claims: Ev2rClaim[]; excluded: Ev2rExclusions } {
  const ranked = rankings(predictions);
  const excluded: Ev2rExclusions = { all_nei: 0, no_predictions: 0, all_retrieved_annotated: 0 };
  const claims: Ev2rClaim[] = [];
  for (const [claimId, judged] of goldByClaim(gold)) {
    const goldList = [...judged].map(([id, label]) => ({ id, label }));
    if (goldList.every((g) => g.label === NEI)) {
      excluded.all_nei++;
      continue;
    }
    const ranking = ranked.get(claimId) ?? [];
    const unannotated = ranking.filter((p) => !judged.has(p.abstractId));
    if (ranking.length === 0) excluded.no_predictions++;
    else if (unannotated.length === 0) excluded.all_retrieved_annotated++;
    else claims.push({ claimId, gold: goldList, unannotated });
  }
  return { claims, excluded };
}

/** The abstract ids whose texts scoring needs: gold and unannotated retrieved abstracts of the scored claims. */
export const neededAbstracts = (claims: readonly Ev2rClaim[]): Set<string> =>
  new Set(claims.flatMap((c) => [...c.gold.map((g) => g.id), ...c.unannotated.map((p) => p.abstractId)]));

/** Ev2R and automatic verification of a run's unannotated pairs. */
export async function scoreEv2r(input: Ev2rInput): Promise<Ev2rResult> {
  const { judge, verifier } = input;
  const plan = planEv2r(input.gold, input.predictions);
  const excluded = plan.excluded;
  const claimText = (id: string): string => {
    const t = input.claims.get(id);
    if (t === undefined) throw new Error(`no text for claim ${id}`);
    return t;
  };
  const work = plan.claims.map((c) => ({ ...c, claim: claimText(c.claimId) }));

  const text = (id: string): AbstractText => {
    const t = input.abstracts.get(id);
    if (!t) throw new Error(`no text for abstract ${id}`);
    return t;
  };
  // Facts of an abstract are asked once per run, whichever claims share it.
  const facts = new Map<string, Promise<string[]>>();
  const factsOf = (id: string): Promise<string[]> => {
    let f = facts.get(id);
    if (!f) {
      f = judge.atomicFacts(text(id));
      facts.set(id, f);
    }
    return f;
  };

  const total = work.reduce((s, w) => s + w.unannotated.length, 0);
  let done = 0;
  const scoreClaim = async (w: (typeof work)[number]): Promise<Ev2rPair[]> => {
    const verdicts = await verifier.verifyPairs(
      w.unannotated.map((p) => ({
        claimId: w.claimId,
        claim: w.claim,
        abstractId: p.abstractId,
        ...text(p.abstractId),
      })),
    );
    const pairs = await Promise.all(
      w.unannotated.map(async (p, i): Promise<Ev2rPair> => {
        const rFacts = await factsOf(p.abstractId);
        const aligned = await Promise.all(
          w.gold.map(async (g) => {
            const gFacts = await factsOf(g.id);
            const [inG, inR] = await Promise.all([
              judge.supported(rFacts, text(g.id)),
              judge.supported(gFacts, text(p.abstractId)),
            ]);
            const precision = share(inG);
            const recall = share(inR);
            return { g, precision, recall, f1: f1(precision, recall) };
          }),
        );
        // Strictly greater keeps the first gold abstract on ties.
        let best = aligned[0];
        for (const a of aligned) if (a.f1 > best.f1) best = a;
        const probs = verdicts[i].probs;
        const sProxy = probOf(probs, best.g.label);
        const predicted = p.label ?? null;
        const pPredicted = predicted === null ? null : probOf(probs, predicted);
        return {
          claimId: w.claimId,
          abstractId: p.abstractId,
          rank: p.rank,
          bestGold: best.g.id,
          bestGoldLabel: best.g.label,
          precision: best.precision,
          recall: best.recall,
          sRef: best.f1,
          sProxy,
          ev2r: 0.5 * best.f1 + 0.5 * sProxy,
          predicted,
          pPredicted,
          sVer: pPredicted === null ? null : 0.5 * pPredicted + 0.5 * (predicted === best.g.label ? 1 : 0),
        };
      }),
    );
    done += pairs.length;
    input.onProgress?.(done, total);
    return pairs;
  };

  const perClaim: Ev2rPair[][] = new Array(work.length);
  let next = 0;
  const lane = async () => {
    while (next < work.length) {
      const i = next++;
      perClaim[i] = await scoreClaim(work[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, input.concurrency ?? 4) }, lane));

  // A claim's best pair: the highest Ev2R, the best-ranked one on ties.
  const best = perClaim.map((pairs) => pairs.reduce((a, b) => (b.ev2r > a.ev2r ? b : a)));
  const pairs = perClaim.flat();
  const labelled = pairs.filter((p) => p.predicted !== null);
  const hasLabels = input.predictions.some((p) => p.label !== undefined);
  return {
    pairs,
    scores: {
      ev2r: meanOf(best.map((p) => p.ev2r)),
      ev2r_claims: best.length,
      ev2r_ref: meanOf(best.map((p) => p.sRef)),
      ev2r_proxy: meanOf(best.map((p) => p.sProxy)),
      ev2r_pairs: pairs.length,
      ev2r_excluded: excluded,
      ev2r_judge: judge.name,
      ev2r_verifier: verifier.name,
      ev2r_approximation: judge.approximation ?? null,
      auto_verification: meanOf(labelled.map((p) => p.sVer ?? 0)),
      auto_verification_pairs: labelled.length,
      auto_verification_prob: meanOf(labelled.map((p) => p.pPredicted ?? 0)),
      auto_verification_agreement: meanOf(labelled.map((p) => (p.predicted === p.bestGoldLabel ? 1 : 0))),
      auto_verification_note:
        labelled.length > 0
          ? null
          : hasLabels
            ? "no unannotated pair has a predicted label"
            : "the predictions have no label column (a retrieval-only run), so there is no y^ to verify",
    },
  };
}
