/**
 * The built-in verifier: the trained model of models/verification/. The shipped model needs no sentence encoder;
 * one trained with the stance group (an ablation) embeds its candidate sentences with USE-lite.
 */
import { join } from "node:path";
import { loadModelFile } from "../data/model-file.ts";
import { MODELS_DIR } from "../data/paths.ts";
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { VerificationModel, type VerificationModelJson } from "./model.ts";
import { abstractSentences, makeVerifier, type Verdict, type Verifier, type VerifyPair } from "./verifier.ts";

export const DEFAULT_MODEL_PATH = join(MODELS_DIR, "verification", "model.json");

export async function loadVerificationModel(path = DEFAULT_MODEL_PATH): Promise<VerificationModel> {
  return loadModelFile(path, "verification", (json) => new VerificationModel(json as VerificationModelJson));
}

export interface BuiltinOptions {
  modelPath?: string;
  /** A model already in memory (wins over modelPath). */
  model?: VerificationModel;
  /**
   * An encoder to share (it is then not closed with the verifier), or a function that opens one, called only when
   * the model needs an encoder; default: USE-lite, if the model needs one.
   */
  encoder?: SentenceEncoder | (() => Promise<SentenceEncoder>);
  /** Pairs per encoder call. */
  batchSize?: number;
  /**
   * The abstracts named by id come from an index of the built-in corpus alone: such pairs are scored by the model's
   * pair model for that corpus (trained on our judged pairs), when it has one.
   */
  builtinCorpus?: boolean;
}

export async function openBuiltinVerifier(options: BuiltinOptions = {}): Promise<Verifier> {
  const model = options.model ?? (await loadVerificationModel(options.modelPath));
  const trainedWith = model.usesEncoder ? model.json.encoder : undefined;
  const open = async () =>
    typeof options.encoder === "function" ? options.encoder() : (options.encoder ?? openUseLite());
  const encoder = trainedWith ? await open() : undefined;
  if (trainedWith && encoder && encoder.name.split("@")[0] !== trainedWith.split("@")[0]) {
    throw new Error(`the verification model was trained with ${trainedWith}, not ${encoder.name}`);
  }
  const batchSize = options.batchSize ?? 256;
  const embed = async (texts: string[]) => {
    if (!encoder) throw new Error("this verification model has no sentence encoder");
    return encoder.embed(texts);
  };
  const verifyPairs = async (pairs: readonly VerifyPair[]): Promise<Verdict[]> => {
    const out: Verdict[] = [];
    for (let s = 0; s < pairs.length; s += batchSize) {
      const prepared = pairs
        .slice(s, s + batchSize)
        .map((p) =>
          model.prepare(
            p.claim,
            abstractSentences(p),
            p.title,
            options.builtinCorpus === true && p.abstractId !== undefined,
          ),
        );
      out.push(...(await model.verdicts(prepared, embed)).verdicts);
    }
    return out;
  };
  return makeVerifier(`builtin:v4${trainedWith ? `+${trainedWith}` : ""}`, verifyPairs, async () => {
    if (encoder && !options.encoder) await encoder.close();
  });
}
