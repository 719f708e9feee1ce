/** `climatecheck classify`: CARDS narratives of claims (task 2) with the shipped hierarchical classifier. */
import { join } from "node:path";
import type { Command } from "commander";
import { readClaims, writeTask2Predictions } from "../../data/climatecheck.ts";
import { writeJsonl } from "../../data/tables.ts";
import { openUseLite, type SentenceEncoder } from "../../encoders/sentence-encoder.ts";
import {
  FAST_MODEL_FILE,
  FULL_MODEL_FILE,
  NARRATIVES_MODEL_DIR,
  NarrativeClassifier,
  readNarrativeModel,
} from "../../narratives/classifier.ts";
import { openNarrativesBackend, readNarrativesConfig } from "../../narratives/config.ts";
import { addProfileOption } from "../profile-option.ts";

export interface ClassifyOptions {
  claims: string;
  out: string;
  /** Also write per-code probabilities (JSON Lines) to this file. */
  probabilities?: string;
  /** The model without the sentence encoder. */
  fast?: boolean;
  /** A model file other than the shipped one. */
  model?: string;
  /** A profile whose narratives section names another backend (e.g. a chat model). */
  config?: string;
}

/** Reads claims, classifies them, writes the task 2 file (and probabilities); returns claims per second. */
export async function classifyClaimsFile(o: ClassifyOptions): Promise<{ claims: number; perSecond: number }> {
  const config = await readNarrativesConfig(o.config);
  const claims = await readClaims(o.claims);
  const path = o.model ?? join(NARRATIVES_MODEL_DIR, o.fast ? FAST_MODEL_FILE : FULL_MODEL_FILE);
  const builtin = async () => {
    const json = await readNarrativeModel(path);
    // Open the encoder only for a model that uses it.
    const encoder: SentenceEncoder | undefined = json.encoder ? await openUseLite() : undefined;
    return { classifier: new NarrativeClassifier(json, encoder), close: async () => encoder?.close() };
  };
  const { classifier, close } =
    config.backend === "builtin"
      ? await builtin()
      : { classifier: openNarrativesBackend(config), close: async () => {} };
  try {
    const started = Date.now();
    // The shared task's output: the classify rule (CARDS-style recall; `check` keeps the stricter one).
    const preds = await classifier.classify(
      claims.map((c) => c.text),
      "classify",
    );
    const seconds = Math.max((Date.now() - started) / 1000, 1e-3);
    await writeTask2Predictions(
      o.out,
      preds.map((p, i) => ({ claimId: claims[i].id, codes: p.codes })),
    );
    if (o.probabilities) {
      await writeJsonl(
        o.probabilities,
        preds.map((p, i) => ({
          claim_id: claims[i].id,
          narrative: p.codes,
          p_narrative: Number(p.narrative.toFixed(4)),
          probabilities: roundAll(p.probabilities),
        })),
      );
    }
    return { claims: claims.length, perSecond: claims.length / seconds };
  } finally {
    await close();
  }
}

/** `pred.csv` -> `pred.probabilities.jsonl`. */
export function probabilitiesPath(out: string): string {
  return `${out.replace(/\.(csv|tsv|jsonl|json)(\.gz)?$/i, "")}.probabilities.jsonl`;
}

function roundAll(p: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Number(v.toFixed(4))]));
}

export function register(program: Command): void {
  addProfileOption(program.command("classify"))
    .description(
      "Predict the CARDS narratives of claims (task 2): claim_id,narrative with codes joined by ';'",
    )
    .requiredOption("--claims <file>", "claims file (claim_id, claim)")
    .requiredOption("--out <file>", "task 2 predictions to write (CSV)")
    .option(
      "--probabilities [file]",
      "also write per-code probabilities as JSON Lines (default file: OUT with .probabilities.jsonl)",
    )
    .option("--fast", "lexical and taxonomy features only (no sentence encoder)")
    .option("--model <file>", "narratives model JSON (default: the shipped one)")
    .option(
      "--config <file>",
      "profile: its narratives section's backend (e.g. a chat model; see docs/byo-models.md)",
    )
    .action(async (opts: Omit<ClassifyOptions, "probabilities"> & { probabilities?: string | true }) => {
      const probabilities = opts.probabilities === true ? probabilitiesPath(opts.out) : opts.probabilities;
      const r = await classifyClaimsFile({ ...opts, probabilities });
      process.stderr.write(
        `classified ${r.claims} claims (${r.perSecond.toFixed(0)} claims/s) to ${opts.out}\n`,
      );
    });
}
