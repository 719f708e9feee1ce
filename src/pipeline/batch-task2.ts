/** Task 2 of a batch run: the CARDS codes of each claim with the shipped narratives classifier. */
import { join } from "node:path";
import { openUseLite, type SentenceEncoder } from "../encoders/sentence-encoder.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../narratives/classifier.ts";
import { type NarrativesConfig, openNarrativesBackend } from "../narratives/config.ts";
import type { Claim } from "../types.ts";
import type { Lane } from "./batch.ts";

export interface Task2LaneOptions {
  /** The model without the sentence encoder. */
  fast?: boolean;
  /** A model file other than the shipped one. */
  model?: string;
  /** A profile's narratives backend (e.g. a chat model) instead of the shipped classifier. */
  narratives?: NarrativesConfig;
}

/** One claim's codes. */
export type Task2Result = string[];

export function narrativesModelPath(o: Task2LaneOptions): string {
  return o.model ?? join(NARRATIVES_MODEL_DIR, o.fast ? FAST_MODEL_FILE : FULL_MODEL_FILE);
}

export async function openTask2Lane(
  o: Task2LaneOptions,
  where: { inWorker: boolean },
): Promise<Lane<Claim, Task2Result>> {
  if (o.narratives && o.narratives.backend !== "builtin") {
    const backend = openNarrativesBackend(o.narratives);
    return {
      async process(claims) {
        return (await backend.classify(claims.map((c) => c.text))).map((p) => p.codes);
      },
      async close() {},
    };
  }
  const json = await readNarrativeModel(narrativesModelPath(o));
  // In a worker thread the encoder runs in-process: the lanes already use the cores.
  const encoder: SentenceEncoder | undefined = json.encoder
    ? await openUseLite(where.inWorker ? { workers: 0 } : {})
    : undefined;
  const classifier = new NarrativeClassifier(json, encoder);
  return {
    async process(claims) {
      // Task 2 output: the classify rule (narratives/decide.ts).
      return (
        await classifier.classify(
          claims.map((c) => c.text),
          "classify",
        )
      ).map((p) => p.codes);
    },
    async close() {
      await encoder?.close();
    },
  };
}
