/**
 * What a text is about, as a distribution over the subject codes of data/abstract-subjects/GUIDELINES.md (64 codes:
 * "sea-ice-arctic", "ocean-biology", "statistics-methods", ...). One multinomial logistic regression reads a claim
 * or an abstract (word TF-IDF, and the USE-lite vector when the model was trained with it); it is trained
 * (build-topics.ts) on abstracts of the built-in corpus whose subject we labelled by careful reading and on claims
 * written from them. The relevance gate compares the claim's distribution with the abstract's: a paper on
 * chlorophyll under Arctic sea ice shares the claim's words but not its subject.
 */
import { join } from "node:path";
import { loadModelFile } from "../data/model-file.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { cosine, dot } from "../encoders/vector.ts";
import { type LogisticJson, LogisticModel } from "../learning/logistic.ts";
import { concatSparse, type SparseVector, sparseFromDense } from "../learning/sparse.ts";
import { type TfidfJson, TfidfVectorizer } from "../learning/tfidf.ts";

export { isTopicCode, TOPIC_CODES } from "../taxonomy/topics.ts";

export const TOPICS_FORMAT = "climatecheck-topics/1";

export interface TopicsJson {
  format: string;
  codes: string[];
  words: TfidfJson;
  /** The sentence encoder whose vector is appended to the TF-IDF block (e.g. "use-lite@0.2.0"); absent: none. */
  encoder?: string;
  model: LogisticJson;
}

/** A text's subject distribution: one probability per code of `codes`. */
export class TopicModel {
  readonly json: TopicsJson;
  readonly codes: readonly string[];
  private readonly words: TfidfVectorizer;
  private readonly model: LogisticModel;

  constructor(json: TopicsJson) {
    if (json.format !== TOPICS_FORMAT)
      throw new Error(`unsupported topics model format "${json.format}" (expected ${TOPICS_FORMAT})`);
    if (json.model.kind !== "multinomial" || json.model.classes !== json.codes.length)
      throw new Error("the topics model needs one multinomial output per code");
    this.json = json;
    this.codes = json.codes;
    this.words = TfidfVectorizer.fromJSON(json.words);
    this.model = LogisticModel.fromJSON(json.model);
  }

  get usesEncoder(): boolean {
    return this.json.encoder !== undefined;
  }

  distribution(text: string, vector?: Float32Array): Float32Array {
    if (this.usesEncoder && !vector)
      throw new Error(`this topics model reads ${this.json.encoder} vectors: pass the text's vector`);
    return this.model.predictProba(topicInput(this.words, text, this.usesEncoder ? vector : undefined));
  }
}

/** The model's input: the text's TF-IDF block, then its sentence vector when the model reads one. */
export function topicInput(words: TfidfVectorizer, text: string, vector?: Float32Array): SparseVector {
  const block = words.transform(text);
  if (!vector) return block;
  return concatSparse([
    { vector: block, width: words.dim },
    { vector: sparseFromDense(vector), width: vector.length },
  ]);
}

/** The gate's topic features of a pair, from the two distributions (order: TOPIC_FEATURES). */
export const TOPIC_FEATURES: readonly string[] = [
  "topic_dot",
  "topic_cos",
  "topic_claim_top",
  "topic_abstract_top",
  "topic_same_top",
  "topic_top3_overlap",
  "topic_min_overlap",
  "topic_claim_entropy",
  "topic_abstract_entropy",
];

/** The indices of the k most probable codes. */
const topK = (d: Float32Array, k: number): number[] =>
  Array.from(d.keys())
    .sort((a, b) => d[b] - d[a])
    .slice(0, k);

const entropy = (d: Float32Array): number => d.reduce((a, p) => a - (p > 0 ? p * Math.log(p) : 0), 0);

export function topicFeatures(claim: Float32Array, abstract: Float32Array): number[] {
  const claimTop = topK(claim, 3);
  const abstractTop = topK(abstract, 3);
  let shared = 0;
  for (let i = 0; i < claim.length; i++) shared += Math.min(claim[i], abstract[i]);
  return [
    dot(claim, abstract),
    cosine(claim, abstract),
    // How much the abstract is about the claim's likeliest subject, and the claim about the abstract's.
    abstract[claimTop[0]],
    claim[abstractTop[0]],
    claimTop[0] === abstractTop[0] ? 1 : 0,
    claimTop.filter((c) => abstractTop.includes(c)).length / 3,
    // The probability mass both put on the same codes; the entropies say how sure each reading is.
    shared,
    entropy(claim),
    entropy(abstract),
  ];
}

export const TOPICS_MODEL_PATH = join(MODELS_DIR, "topics", "model.json");

export async function loadTopicModel(path = TOPICS_MODEL_PATH): Promise<TopicModel> {
  return loadModelFile(path, "topics", (j) => new TopicModel(j as TopicsJson));
}
