/**
 * Label mapping and sentence aggregation of the ONNX NLI backend, kept apart from the model so both rules can be
 * read and tested alone. An NLI model scores (premise = abstract sentence, hypothesis = claim); its classes are
 * mapped onto our three labels, and the sentence scores are pooled into one verdict per pair.
 */
import { NEI } from "../../types.ts";
import { decide, type LabelProbs, type Verdict } from "../verifier.ts";

export type LabelKey = keyof LabelProbs;
export const LABEL_KEYS: readonly LabelKey[] = ["supports", "refutes", "nei"];

/** Model class (its id2label name, case-insensitive, or its index as a string) → our label. */
export type LabelMap = Record<string, LabelKey>;

/** The usual MNLI class names; a 2-class model's "not_entailment" is NEI (it cannot tell refutation apart). */
function defaultTarget(name: string): LabelKey | undefined {
  const n = name.toLowerCase().replace(/[\s-]+/g, "_");
  if (n.startsWith("not_entail") || n.startsWith("non_entail")) return "nei";
  if (n.startsWith("entail")) return "supports";
  if (n.startsWith("contradict")) return "refutes";
  if (n === "neutral") return "nei";
  return undefined;
}

/**
 * Our label for each model class, in class order. Every class must be mapped, and every key of `labelMap` must
 * name a class (a typo would otherwise silently fall back to the default).
 */
export function resolveLabelMap(id2label: Record<string, string>, labelMap?: LabelMap): LabelKey[] {
  const count = Object.keys(id2label).length;
  const names = Array.from({ length: count }, (_, i) => id2label[String(i)]);
  if (count === 0 || names.some((n) => n === undefined))
    throw new Error("config.json id2label must name the classes 0..n-1");
  if (labelMap) {
    const known = new Set([...names.map((n) => n.toLowerCase()), ...names.map((_, i) => String(i))]);
    for (const key of Object.keys(labelMap))
      if (!known.has(key.toLowerCase()))
        throw new Error(
          `labelMap key "${key}" is not a model class (${names.join(", ")} or 0..${count - 1})`,
        );
  }
  const byKey = new Map(Object.entries(labelMap ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return names.map((name, i) => {
    const target = labelMap ? (byKey.get(String(i)) ?? byKey.get(name.toLowerCase())) : defaultTarget(name);
    if (!target)
      throw new Error(
        `model class ${i} "${name}" has no label: set labelMap (e.g. {"${name}": "supports" | "refutes" | "nei"})`,
      );
    return target;
  });
}

/** Softmax of one row of logits, folded onto our labels (classes mapped to the same label add up). */
export function classProbs(logits: ArrayLike<number>, targets: readonly LabelKey[]): LabelProbs {
  let max = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < targets.length; i++) max = Math.max(max, logits[i]);
  const exps = targets.map((_, i) => Math.exp(logits[i] - max));
  const total = exps.reduce((s, e) => s + e, 0);
  const probs: LabelProbs = { supports: 0, refutes: 0, nei: 0 };
  targets.forEach((t, i) => {
    probs[t] += exps[i] / total;
  });
  return probs;
}

/**
 * One verdict from per-sentence probabilities. The decisive sentence is the one with the strongest Supports or
 * Refutes probability (one clear finding settles a claim, the rest of an abstract is usually background); the pair
 * takes that sentence's probabilities and label (weak Supports/Refutes below `minConfidence` is folded into NEI). The rationale
 * is every sentence whose own label is the pair's label.
 */
export function aggregateSentences(sentences: readonly LabelProbs[], minConfidence = 0): Verdict {
  let best = 0;
  const strength = (p: LabelProbs) => Math.max(p.supports, p.refutes);
  for (let i = 1; i < sentences.length; i++) if (strength(sentences[i]) > strength(sentences[best])) best = i;
  const { label, confidence, probs } = decide(sentences[best], minConfidence);
  const rationale =
    label === NEI ? [] : sentences.flatMap((p, i) => (decide(p, minConfidence).label === label ? [i] : []));
  return { label, confidence, probs, rationale };
}
