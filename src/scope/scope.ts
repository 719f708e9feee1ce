/**
 * Out of scope: ClimateCheck checks English claims about climate against scientific abstracts. A claim on another
 * subject, or in another language, would still get verdicts from the verifier, and they would mean nothing; the
 * product answers it with a caution instead of a lean.
 * - Subject: a TF-IDF + logistic regression classifier, P(climate), trained by build.ts on our data (climate:
 *   Climate-FEVER claims, CARDS paragraphs, ClimateBERT climate-detection "yes"; not climate: SciFact's biomedical
 *   claims, ClimateBERT "no"), with one more feature: the text has no term of a climate lexicon learnt on train.
 * - Weather small talk (the weather at one time, no word of climate or a trend): a rule, weatherSmallTalk.
 * - Language: rules (englishLanguage): the script of the letters, then English against other European function words.
 */
import { join } from "node:path";
import { loadModelFile } from "../data/model-file.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import type { SparseVector } from "../learning/sparse.ts";
import { type TfidfJson, TfidfVectorizer } from "../learning/tfidf.ts";
import type { Scope } from "../pipeline/result.ts";
import { contentTokens } from "../text/tokenize.ts";

export const SCOPE_FORMAT = "climatecheck-scope/2";
/** Below this P(climate), a claim is out of scope. */
export const CLIMATE_THRESHOLD = 0.5;

export interface ScopeJson {
  format: typeof SCOPE_FORMAT;
  vectorizer: TfidfJson;
  /** Climate terms (build.ts climateLexicon); the model's last feature is "the text has none of them". */
  lexicon: string[];
  model: LogisticJson;
}

/**
 * Weather small talk: the weather ("rain", "sunny", "cold") at one time ("today", "tomorrow", "last night", "this
 * weekend") with no word of climate, a trend, a comparison or a long span. Our training data have no such text (their weather words all come from climate
 * text), so this is a rule, not learnt.
 */
const ONE_TIME =
  /\b(today|tonight|tomorrow|yesterday|this (morning|afternoon|evening|weekend)|last night|right now)\b/i;
const WEATHER =
  /\b(weather|sunny|sunshine|rain\w*|snow\w*|cloud\w*|wind\w*|storm\w*|thunder\w*|forecast|hot|cold|warm|chilly|fog\w*|humid|freezing|umbrella|sky)\b/i;
const LONG_VIEW =
  /\b(climate|global|warming|greenhouse|emissions?|carbon|co2|methane|decades?|century|centuries|years|since|trends?|records?|history|historic|ever|earliest|latest|than|average|increas\w*|decreas\w*|more|less|fewer|frequent\w*|becom\w*|getting|changes?|changing|sea|ice|glaciers?|arctic|antarctic\w*|greenland|planet|world|fossil|renewable|energy)\b/i;

export function weatherSmallTalk(text: string): boolean {
  return ONE_TIME.test(text) && WEATHER.test(text) && !LONG_VIEW.test(text);
}

export type ScopeAnswer = Scope;

// Function words only (no nouns), and none that English also uses ("a", "no", "in", "die", "son", "also").
const ENGLISH = new Set(
  "the of and to is are was were be been has have had that this these those with for from by at it its not which as than or will would can could should there their they we our".split(
    " ",
  ),
);
const OTHER = new Set(
  // Spanish, French, Portuguese, Italian, German, Dutch.
  [
    "el los las del que y es está están son por para con una un muy más pero como sobre ser hay también",
    "le les des est et une du pour dans sont avec pas qui sur au aux ce cette nous vous mais plus très",
    "os da do dos das uma não são em com mas ao pelo pela",
    "il di che della gli sono nel alla non è più anche",
    "der das und ist nicht mit den dem ein eine sind auf für von zu wird auch",
    "het een van en niet zijn op voor met wordt ook",
  ]
    .join(" ")
    .split(" "),
);

/**
 * Whether a text reads as English: most of its letters are Latin (else Chinese, Arabic, Cyrillic ... text), and it
 * has no more non-English function words than English ones (with at least two, so a name like "La Niña" passes).
 */
export function englishLanguage(text: string): boolean {
  const letters = [...text].filter((c) => /\p{L}/u.test(c));
  if (letters.length === 0) return false;
  const latin = letters.filter((c) => /\p{Script=Latin}/u.test(c)).length;
  if (latin / letters.length < 0.7) return false;
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  let english = 0;
  let other = 0;
  for (const w of words) {
    if (ENGLISH.has(w)) english++;
    else if (OTHER.has(w)) other++;
  }
  return !(other >= 2 && other > english);
}

export class ScopeDetector {
  readonly json: ScopeJson;
  private readonly vectorizer: TfidfVectorizer;
  private readonly model: LogisticModel;
  private readonly lexicon: ReadonlySet<string>;

  constructor(json: ScopeJson) {
    if (json.format !== SCOPE_FORMAT)
      throw new Error(`unsupported scope model format "${json.format}" (expected ${SCOPE_FORMAT})`);
    this.json = json;
    this.vectorizer = TfidfVectorizer.fromJSON(json.vectorizer);
    this.model = LogisticModel.fromJSON(json.model);
    this.lexicon = new Set(json.lexicon);
  }

  pClimate(text: string): number {
    return this.model.predictProba(scopeFeatures(this.vectorizer, this.lexicon, text))[1];
  }

  assess(claim: string): ScopeAnswer {
    return scopeOf(claim, this.pClimate(claim));
  }
}

/** The model's features: word TF-IDF, then 1 when the text has no climate term of the lexicon. */
export function scopeFeatures(
  vectorizer: TfidfVectorizer,
  lexicon: ReadonlySet<string>,
  text: string,
): SparseVector {
  const v = vectorizer.transform(text);
  if (contentTokens(text).some((t) => lexicon.has(t))) return v;
  return { indices: [...v.indices, vectorizer.dim], values: [...v.values, 1] };
}

export const SCOPE_MODEL_PATH = join(MODELS_DIR, "scope", "model.json");

export function loadScopeDetector(path = SCOPE_MODEL_PATH): Promise<ScopeDetector> {
  return loadModelFile(path, "scope", (json) => new ScopeDetector(json as ScopeJson));
}

/** The scope answer from the language rule and P(climate) (null: no climate model, only the language is checked). */
export function scopeOf(claim: string, pClimate: number | null): ScopeAnswer {
  const english = englishLanguage(claim);
  const p = pClimate === null ? null : Math.round(pClimate * 1000) / 1000;
  let reason: string | null = null;
  if (!english)
    reason =
      "This claim does not look like English: ClimateCheck checks English claims about climate, so it gives no lean and the verdicts below are not meaningful.";
  else if (p !== null && p < CLIMATE_THRESHOLD)
    reason = `This claim does not look like a claim about climate (probability ${p.toFixed(2)}): ClimateCheck checks climate claims against climate science, so it gives no lean and the verdicts below are not meaningful.`;
  else if (weatherSmallTalk(claim))
    reason =
      "This claim is about the weather at one time, not about climate (a trend over years): ClimateCheck checks climate claims against climate science, so it gives no lean and the verdicts below are not meaningful.";
  return { in_scope: reason === null, p_climate: p, english, reason };
}
