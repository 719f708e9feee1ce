/**
 * The default index (homeDir()/index/default), built on first use from the corpus named by $CLIMATECHECK_CORPUS,
 * else from the built-in corpus shipped in the package (src/data/builtin-corpus.ts), so it builds on any machine,
 * offline. The training sets are never the default corpus. It is built in a `.partial` folder (ingest resumes
 * there after an interruption) and renamed into place when complete, so the default index is either whole or
 * absent; a lock file keeps two processes from building it at once.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { BUILTIN_CORPUS, isBuiltinOnly, isOlderBuiltin } from "../data/builtin-corpus.ts";
import type { CorpusFormat } from "../data/climatecheck.ts";
import { readCorpus } from "../data/climatecheck.ts";
import { DataError } from "../data/errors.ts";
import { cacheDir, homeDir, trainingFiles } from "../data/paths.ts";
import { USE_LITE_DIM, USE_LITE_NAME } from "../encoders/use-lite-model.ts";
import { cacheKey, openVectorCache } from "../encoders/vector-cache.ts";
import { countLines } from "../index/count-lines.ts";
import { titleAndLead } from "../index/embed-text.ts";
import { type IngestProgress, ingest, type VectorSpec } from "../index/ingest.ts";
import { hasOtherSchema, readManifest } from "../index/schema.ts";
import { openEncoders, USE_LEAD_CHARS } from "../retrieval/encoders.ts";

export const defaultIndexDir = (): string => join(homeDir(), "index", "default");

export interface CorpusSource {
  path: string;
  format: CorpusFormat;
}

export interface DefaultIndexProgress extends IngestProgress {
  corpus: string;
  /** 1-based position of this corpus among `steps`. */
  step: number;
  steps: number;
  /** Lines of the corpus file (the bar's total), when known. */
  total?: number;
}

export interface DefaultIndexOptions {
  dir?: string;
  corpora?: CorpusSource[];
  /** Vector sets to build (default: the retriever's, as `climatecheck ingest` builds them). */
  openVectors?: () => Promise<{ specs: VectorSpec[]; close(): Promise<void> }>;
}

/** $CLIMATECHECK_CORPUS, else the built-in corpus. */
export function defaultCorpora(): CorpusSource[] {
  const fromEnv = process.env.CLIMATECHECK_CORPUS;
  if (fromEnv) {
    if (!existsSync(fromEnv))
      throw new DataError(fromEnv, "CLIMATECHECK_CORPUS names a file that does not exist");
    return [{ path: resolve(fromEnv), format: "auto" }];
  }
  return [{ path: BUILTIN_CORPUS.path, format: "climatecheck" }];
}

/**
 * Whether an existing default index is to be built again: one an older version built from the training sets
 * (SciFact, Climate-FEVER) or from an earlier built-in corpus, or the built-in corpus alone once $CLIMATECHECK_CORPUS names another corpus. An index
 * the user ingested into the default folder is kept as it is.
 */
function outdated(dir: string, corpora: CorpusSource[]): boolean {
  let sources: { path: string; fingerprint: string }[];
  try {
    sources = readManifest(dir).sources;
  } catch {
    return false; // opening it reports what is wrong
  }
  const f = trainingFiles();
  const training = [f.scifactCorpus, f.climateFever].map((p) => p.split(/[\\/]/).slice(-2).join("/"));
  const fromTraining = (p: string) => training.includes(p.split(/[\\/]/).slice(-2).join("/"));
  if (sources.length > 0 && sources.every((s) => fromTraining(s.path))) return true;
  if (isOlderBuiltin(sources)) return true;
  return isBuiltinOnly(sources) && corpora.some((c) => c.path !== BUILTIN_CORPUS.path);
}

/** The built-in corpus as ingest embeds it for USE-lite: each abstract's recipe text, in file order. */
export async function builtinUseTexts(): Promise<string[]> {
  const recipe = titleAndLead(USE_LEAD_CHARS);
  const texts: string[] = [];
  for await (const { abstract: a } of readCorpus(BUILTIN_CORPUS.path, { format: "climatecheck" }))
    texts.push(recipe.text({ id: a.id, title: a.title, abstract: a.abstract, sentences: [] }));
  return texts;
}

/**
 * Puts the shipped USE-lite vectors of the built-in corpus into the vector cache, so its first ingest embeds
 * nothing (USE-lite is not even loaded). Skipped when the model or the text recipe differ from the recorded ones.
 */
export async function seedBuiltinVectors(dir = join(cacheDir(), "use-lite")): Promise<number> {
  const v = BUILTIN_CORPUS.vectors;
  if (v.model !== USE_LITE_NAME || v.dim !== USE_LITE_DIM || v.recipe !== titleAndLead(USE_LEAD_CHARS).spec)
    return 0;
  if (!existsSync(v.path)) return 0;
  const raw = gunzipSync(await readFile(v.path));
  const flat = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const texts = await builtinUseTexts();
  if (flat.length !== texts.length * v.dim) return 0;
  const cache = openVectorCache(dir, USE_LITE_NAME, USE_LITE_DIM);
  try {
    const keys = texts.map((t) => cacheKey(USE_LITE_NAME, t));
    const have = cache.getMany(keys);
    const entries = keys
      .map((key, i) => ({ key, vector: flat.slice(i * v.dim, (i + 1) * v.dim) }))
      .filter((_, i) => !have[i]);
    if (entries.length) cache.putMany(entries);
    return entries.length;
  } finally {
    cache.close();
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
};

/** Takes the build lock, or waits for the process holding it; returns false when that process built the index. */
async function lock(file: string, dir: string): Promise<boolean> {
  for (;;) {
    if (existsSync(dir)) return false;
    try {
      await writeFile(file, String(process.pid), { flag: "wx" });
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const holder = Number(readFileSync(file, "utf8"));
    if (!Number.isInteger(holder) || holder <= 0 || !alive(holder)) await rm(file, { force: true });
    else await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The default index directory, built first when missing. */
export async function ensureDefaultIndex(
  onProgress?: (p: DefaultIndexProgress) => void,
  options: DefaultIndexOptions = {},
): Promise<string> {
  const dir = resolve(options.dir ?? defaultIndexDir());
  // One built by an older version is ours to rebuild (opening it would fail on its schema version).
  if (hasOtherSchema(dir)) await rm(dir, { recursive: true, force: true });
  const corpora = options.corpora ?? defaultCorpora();
  if (existsSync(dir) && outdated(dir, corpora)) await rm(dir, { recursive: true, force: true });
  if (existsSync(dir)) return dir;
  await mkdir(dirname(dir), { recursive: true });
  const lockFile = `${dir}.lock`;
  if (!(await lock(lockFile, dir))) return dir;
  try {
    const partial = `${dir}.partial`;
    const totals = onProgress ? await Promise.all(corpora.map((c) => countLines(c.path))) : [];
    const at = (i: number) => ({
      corpus: corpora[i].path,
      step: i + 1,
      steps: corpora.length,
      total: totals[i],
    });
    // Said before the encoders load (seconds; the word vectors are converted on the very first run).
    onProgress?.({ line: 0, added: 0, skipped: 0, alreadyIndexed: 0, phase: "read", ...at(0) });
    if (!options.openVectors && corpora.some((c) => c.path === BUILTIN_CORPUS.path))
      await seedBuiltinVectors();
    const vectors = await (options.openVectors ?? (() => openEncoders({ workers: 2 })))();
    try {
      for (const [i, c] of corpora.entries()) {
        await ingest(c.path, partial, {
          format: c.format,
          vectors: vectors.specs,
          // Rows without an id or text are skipped, as `climatecheck ingest` does; the rest is indexed.
          onSkip: () => {},
          onProgress: (p) => onProgress?.({ ...p, ...at(i) }),
        });
      }
    } finally {
      await vectors.close();
    }
    await rename(partial, dir);
    return dir;
  } finally {
    await rm(lockFile, { force: true });
  }
}

/**
 * Vector sets added to an existing index (a profile's dense model on the default index built without it): the
 * index's first corpus is ingested again with the sets it has plus `names`, which backfills the missing ones over the
 * docs already there (ingest skips ids it holds). Returns false, doing nothing, when every set is there whole, or
 * when the corpus file is gone (the retriever then names the ingest command to run).
 */
export async function addVectorSets(
  dir: string,
  names: string[],
  openVectors: () => Promise<{ specs: VectorSpec[]; close(): Promise<void> }>,
  /** Said before the (long) embedding starts: how many docs. */
  onStart?: (docs: number) => void,
): Promise<boolean> {
  const m = readManifest(dir);
  const behind = names.some((n) => (m.vectors[n]?.docs ?? -1) < m.committed.docs);
  const corpus = m.sources[0]?.path;
  if (!behind || !corpus || !existsSync(corpus)) return false;
  const vectors = await openVectors();
  onStart?.(m.committed.docs);
  try {
    // Only the sets the index has, and the new ones: ingest refuses a set left out or one added by accident.
    const specs = vectors.specs.filter((s) => s.name in m.vectors || names.includes(s.name));
    await ingest(corpus, dir, {
      format: "auto",
      vectors: specs,
      onSkip: () => {},
    });
  } finally {
    await vectors.close();
  }
  return true;
}
