/**
 * Word lists behind the polarity features of the verifier: negations, null-result phrases, direction words,
 * antonym pairs and hedges. Kept small and explicit; every entry is a lower-cased token of src/text/tokenize.ts.
 */

export const NEGATIONS: ReadonlySet<string> = new Set(
  "not no never none nor neither without cannot can't don't doesn't didn't isn't aren't wasn't weren't won't hasn't haven't hadn't lack lacks lacking absence absent fail fails failed unable".split(
    " ",
  ),
);

/** Two-token phrases that report a null result ("no significant difference", "not associated"). */
export const NULL_RESULT: readonly [string, string][] = [
  ["no", "significant"],
  ["not", "significantly"],
  ["not", "significant"],
  ["no", "difference"],
  ["no", "differences"],
  ["no", "effect"],
  ["no", "association"],
  ["no", "evidence"],
  ["no", "change"],
  ["not", "associated"],
  ["not", "affect"],
  ["not", "change"],
  ["not", "alter"],
  ["did", "not"],
  ["does", "not"],
  ["was", "unchanged"],
  ["remained", "unchanged"],
  ["were", "unchanged"],
  ["no", "correlation"],
  ["not", "correlated"],
];

/** Tokens that say a quantity goes up (+1) or down (-1). */
export const DIRECTION: ReadonlyMap<string, 1 | -1> = new Map([
  ..."increase increases increased increasing rise rises rising rose risen raise raises raised raising higher high greater more grow grows growing grew growth gain gains up upward accelerate accelerates accelerating accelerated enhance enhances enhanced enhancing promote promotes promoted promoting elevated elevate elevates upregulate upregulates upregulated upregulation induce induces induced induction activate activates activated activation improve improves improved warming warmer expand expands expanding expansion exceed exceeds amplify amplifies amplified stimulate stimulates stimulated boost boosts boosted strengthen strengthens strengthened worsen worsens worsened highs highest maximum maxima"
    .split(" ")
    .map((w) => [w, 1 as const] as const),
  ..."decrease decreases decreased decreasing decline declines declined declining fall falls falling fell fallen drop drops dropped dropping lower low less fewer reduce reduces reduced reducing reduction shrink shrinks shrinking shrank down downward slow slows slowed slowing diminish diminishes diminished inhibit inhibits inhibited inhibiting inhibition suppress suppresses suppressed suppression downregulate downregulates downregulated downregulation impair impairs impaired attenuate attenuates attenuated cooling cooler weaken weakens weakened prevent prevents prevented block blocks blocked loss lose loses lost deplete depletes depleted melt melts melting melted lows lowest minimum minima retreat retreats retreating retreated thinning thinned"
    .split(" ")
    .map((w) => [w, -1 as const] as const),
]);

/** Pairs of opposite words (both directions are looked up). */
const ANTONYM_PAIRS: readonly [string, string][] = [
  ["increase", "decrease"],
  ["increases", "decreases"],
  ["increased", "decreased"],
  ["higher", "lower"],
  ["more", "less"],
  ["more", "fewer"],
  ["greater", "smaller"],
  ["larger", "smaller"],
  ["rise", "fall"],
  ["rising", "falling"],
  ["positive", "negative"],
  ["positively", "negatively"],
  ["benefit", "harm"],
  ["beneficial", "harmful"],
  ["beneficial", "detrimental"],
  ["protective", "harmful"],
  ["protects", "damages"],
  ["promotes", "inhibits"],
  ["activates", "inhibits"],
  ["enhances", "impairs"],
  ["improves", "worsens"],
  ["improved", "worsened"],
  ["warming", "cooling"],
  ["warmer", "cooler"],
  ["gain", "loss"],
  ["gains", "losses"],
  ["accelerating", "slowing"],
  ["strong", "weak"],
  ["stronger", "weaker"],
  ["safe", "dangerous"],
  ["efficient", "inefficient"],
  ["effective", "ineffective"],
  ["present", "absent"],
  ["presence", "absence"],
  ["upregulates", "downregulates"],
  ["upregulated", "downregulated"],
  ["upregulation", "downregulation"],
  ["induces", "suppresses"],
  ["increasing", "decreasing"],
  ["expands", "shrinks"],
  ["growing", "shrinking"],
  ["growing", "declining"],
  ["grow", "shrink"],
  ["grown", "shrunk"],
  ["high", "low"],
  ["highs", "lows"],
  ["highest", "lowest"],
  ["maximum", "minimum"],
  ["advancing", "retreating"],
  ["above", "below"],
  ["early", "late"],
  ["earlier", "later"],
  ["always", "never"],
  ["all", "none"],
  ["natural", "anthropogenic"],
  ["natural", "man-made"],
];

export const ANTONYMS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const map = new Map<string, Set<string>>();
  const add = (a: string, b: string) => {
    const set = map.get(a) ?? new Set<string>();
    set.add(b);
    map.set(a, set);
  };
  for (const [a, b] of ANTONYM_PAIRS) {
    add(a, b);
    add(b, a);
  }
  return map;
})();

/** Words that weaken a statement. */
export const HEDGES: ReadonlySet<string> = new Set(
  "may might could possibly possible potentially potential suggest suggests suggested suggesting likely unlikely perhaps appear appears appeared seem seems seemed indicate indicates hypothesize hypothesized hypothesis speculate unclear uncertain uncertainty preliminary further warranted whether".split(
    " ",
  ),
);
