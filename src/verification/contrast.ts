/**
 * CheckList-style contrast claims: a claim with its direction swapped (rising/falling, growing/shrinking,
 * more/less, record high/record low, accelerating/not accelerating ...) or, when it has no direction word, negated
 * ("is" -> "is not", "does not" -> "does"). A sentence that supports a claim must not support its contrast too; the
 * contrast benchmark and the verifier's direction check (contrastGuard) rest on this rule.
 */

/** Direction words and their opposites (both ways). Whole lower-case words; case is kept when swapping. */
const SWAPS: readonly [string, string][] = [
  ["rising", "falling"],
  ["rise", "fall"],
  ["rises", "falls"],
  ["rose", "fell"],
  ["risen", "fallen"],
  ["increasing", "decreasing"],
  ["increase", "decrease"],
  ["increases", "decreases"],
  ["increased", "decreased"],
  ["growing", "shrinking"],
  ["grow", "shrink"],
  ["grows", "shrinks"],
  ["grew", "shrank"],
  ["more", "less"],
  ["higher", "lower"],
  ["high", "low"],
  ["highest", "lowest"],
  ["greater", "smaller"],
  ["larger", "smaller"],
  ["warming", "cooling"],
  ["warmer", "cooler"],
  ["warms", "cools"],
  ["expanding", "contracting"],
  ["gain", "loss"],
  ["gaining", "losing"],
  ["positive", "negative"],
  ["up", "down"],
  ["overestimated", "underestimated"],
  ["overestimate", "underestimate"],
  ["overestimates", "underestimates"],
  ["overestimating", "underestimating"],
  ["exaggerated", "understated"],
  ["stopped", "continued"],
];
const SWAP = new Map<string, string>();
for (const [a, b] of SWAPS) {
  SWAP.set(a, b);
  if (!SWAP.has(b)) SWAP.set(b, a);
}
// "less" and "smaller" map back to one word each.
SWAP.set("less", "more");
SWAP.set("smaller", "larger");

/** Verbs of progress that are negated rather than swapped ("accelerating" -> "not accelerating"). */
const NEGATE_BEFORE = new Set(["accelerating", "accelerate", "accelerates", "accelerated", "slowing"]);
const AUXILIARIES = /\b(is|are|was|were|has|have|had|will|can|does|do|did|could|would|should|may)\b/i;

const keepCase = (from: string, to: string) =>
  from === from.toUpperCase() && from.length > 1
    ? to.toUpperCase()
    : from[0] === from[0].toUpperCase()
      ? to[0].toUpperCase() + to.slice(1)
      : to;

/**
 * "global warming" (or cooling) and "sea level rise" name a subject, not a direction ("Global warming stopped",
 * "Sea level rise is accelerating"): never swapped, so the claim's own direction is what changes.
 */
const isSubject = (prev: string | undefined, w: string) =>
  (prev === "global" && (w === "warming" || w === "cooling")) || (prev === "level" && w === "rise");

/**
 * The claim's contrast, or undefined when the rule finds nothing to change. Order: remove a "not" / "n't" that
 * sits before a progress verb or after an auxiliary (a negated claim becomes positive), else put "not" before a
 * progress verb (a claim about a rate asserts the rate: "Arctic ice loss is accelerating" contrasts with "is not
 * accelerating", not with "Arctic ice gain"), else swap the first direction word, else put "not" after the first
 * auxiliary.
 */
export function contrastClaim(claim: string): string | undefined {
  const unnegated = claim.replace(/\b(is|are|was|were|has|have|does|do|did|will|can)\s+not\s+/i, "$1 ");
  if (unnegated !== claim) return unnegated;
  const words = [...claim.matchAll(/[A-Za-z]+/g)];
  const progress = words.find((m) => NEGATE_BEFORE.has(m[0].toLowerCase()));
  if (progress?.index !== undefined) {
    // "not" after the auxiliary that carries the verb ("has not been slowing"), else right before the verb.
    const aux = AUXILIARIES.exec(claim.slice(0, progress.index));
    const at = aux ? aux.index + aux[0].length : progress.index;
    return aux
      ? `${claim.slice(0, at)} not${claim.slice(at)}`
      : `${claim.slice(0, at)}not ${claim.slice(at)}`;
  }
  for (const [k, m] of words.entries()) {
    const w = m[0].toLowerCase();
    const to = isSubject(words[k - 1]?.[0].toLowerCase(), w) ? undefined : SWAP.get(w);
    if (to && m.index !== undefined)
      return claim.slice(0, m.index) + keepCase(m[0], to) + claim.slice(m.index + m[0].length);
  }
  const aux = AUXILIARIES.exec(claim);
  if (aux) return `${claim.slice(0, aux.index + aux[0].length)} not${claim.slice(aux.index + aux[0].length)}`;
  return undefined;
}
