/** Where things live: the package root, the training data, the models and the local working directory. */
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root (works from src/ under tsx and from dist/ after the build). */
export const PACKAGE_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Trained artifacts shipped with the package. */
export const MODELS_DIR = join(PACKAGE_ROOT, "models");

/** The training data sets (SciFact, Climate-FEVER, CARDS, FLICC): $CLIMATECHECK_DATA or ../shared/data. */
export function trainingDataDir(): string {
  const fromEnv = process.env.CLIMATECHECK_DATA;
  if (fromEnv) return resolve(fromEnv);
  return resolve(PACKAGE_ROOT, "..", "shared", "data");
}

/** Local state (default index, caches): $CLIMATECHECK_HOME or .climatecheck in the package root. */
export function homeDir(): string {
  return resolve(process.env.CLIMATECHECK_HOME ?? join(PACKAGE_ROOT, ".climatecheck"));
}

export function cacheDir(): string {
  return join(homeDir(), "cache");
}

const CLIMATEBERT_SETS = ["climate_detect", "sent", "spec", "climate_commit", "tcfd"] as const;

/** Paths of the individual training files. */
export function trainingFiles(dir = trainingDataDir()) {
  return {
    scifactCorpus: join(dir, "scifact", "corpus.csv"),
    scifactClaims: join(dir, "scifact", "claims_train.csv"),
    climateFever: join(dir, "climate-fever", "climate-fever.dev.jsonl"),
    cards: join(dir, "cards", "validation.csv"),
    flicc: {
      train: join(dir, "flicc", "fallacy_train.csv"),
      val: join(dir, "flicc", "fallacy_val.csv"),
      test: join(dir, "flicc", "fallacy_test.csv"),
    },
    taxonomy: join(dir, "cards-taxonomy", "cards.ttl"),
    arxivClimate: join(dir, "arxiv-climate", "corpus.jsonl"),
    climateStance: {
      train: join(dir, "climate-stance", "train.csv"),
      val: join(dir, "climate-stance", "val.csv"),
    },
    /** ClimateBERT's five sets share paragraphs; each side is the union of its files. */
    climatebert: {
      train: CLIMATEBERT_SETS.map((s) => join(dir, "climatebert", `${s}_train.csv`)),
      test: CLIMATEBERT_SETS.map((s) => join(dir, "climatebert", `${s}_test.csv`)),
    },
    environmentalClaims: {
      train: join(dir, "environmental-claims", "train.jsonl"),
      dev: join(dir, "environmental-claims", "dev.jsonl"),
      test: join(dir, "environmental-claims", "test.jsonl"),
    },
    scifactClaimsTest: join(dir, "scifact", "claims_test.csv"),
    gwsd: join(dir, "gwsd", "GWSD.tsv"),
    climateDetect: {
      train: join(dir, "climatebert", "climate_detect_train.csv"),
      test: join(dir, "climatebert", "climate_detect_test.csv"),
    },
  };
}

export function hasTrainingData(dir = trainingDataDir()): boolean {
  return existsSync(join(dir, "scifact", "corpus.csv"));
}
