/**
 * Out of scope: ClimateCheck checks English claims about climate against scientific abstracts. A claim on another
 * subject, or in another language, would still get verdicts from the verifier, and they would mean nothing; the
 * product answers it with a caution instead of a lean.
 * - Subject: a TF-IDF + logistic regression classifier, P(climate), trained by build.ts on our data (climate:
 *   Climate-FEVER claims, CARDS paragraphs, ClimateBERT climate-detection "yes"; not climate: SciFact's biomedical
 *   claims, ClimateBERT "no").
 * - Language: rules (englishLanguage): the script of the letters, then English against other European function words.
 */
import { join } from "node:path";
import { loadModelFile } from "../data/model-file.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { type TfidfJson, TfidfVectorizer } from "../learning/tfidf.ts";
import type { Scope } from "../pipeline/result.ts";

export const SCOPE_FORMAT = "climatecheck-scope/1";
/** Below this P(climate), a claim is out of scope. */
export const CLIMATE_THRESHOLD = 0.5;

export interface ScopeJson {
  format: typeof SCOPE_FORMAT;
  vectorizer: TfidfJson;
  model: LogisticJson;
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

  constructor(json: ScopeJson) {
    if (json.format !== SCOPE_FORMAT)
      throw new Error(`unsupported scope model format "${json.format}" (expected ${SCOPE_FORMAT})`);
    this.json = json;
    this.vectorizer = TfidfVectorizer.fromJSON(json.vectorizer);
    this.model = LogisticModel.fromJSON(json.model);
  }

  pClimate(text: string): number {
    return this.model.predictProba(this.vectorizer.transform(text))[1];
  }

  assess(claim: string): ScopeAnswer {
    return scopeOf(claim, this.pClimate(claim));
  }
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
  return { in_scope: reason === null, p_climate: p, english, reason };
}
