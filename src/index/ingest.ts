/**
 * Builds or extends an index from a corpus file. Abstracts are appended to docs.jsonl and the vector files in
 * batches; after each batch the manifest's commit point moves forward atomically. An interrupted ingest resumes
 * from the last commit (files are cut back to it) and skips ids already in the index, so re-ingesting is
 * idempotent. BM25 postings, offsets and ids are built in memory as docs are committed (the committed docs of a
 * resumed index are read back once, at the start) and written at the end (finalise).
 */
import { createHash } from "node:crypto";
import { createReadStream, existsSync } from "node:fs";
import { appendFile, mkdir, readFile, rename, rm, stat, truncate, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { type CorpusFormat, readCorpus } from "../data/climatecheck.ts";
import { DataError } from "../data/errors.ts";
import { writeFileAtomic } from "../data/tables.ts";
import type { SentenceEncoder } from "../encoders/sentence-encoder.ts";
import { splitSentences } from "../text/sentences.ts";
import type { CorpusAbstract } from "../types.ts";
import { Bm25Builder } from "./bm25.ts";
import { corpusKind, settingsFor } from "./bm25-settings.ts";
import { checksumFiles, type FileChecksum } from "./checksums.ts";
import { crashPoint } from "./crash-points.ts";
import type { EmbedRecipe } from "./embed-text.ts";
import { buildIvf, ivfCount, writeIvf } from "./ivf.ts";
import {
  decodeDoc,
  encodeDoc,
  FILES,
  type Manifest,
  readManifest,
  SCHEMA_VERSION,
  type StoredDoc,
  writeManifest,
} from "./schema.ts";

/** One dense vector set to build: its name (file suffix), encoder and text recipe. */
export interface VectorSpec {
  name: string;
  encoder: Pick<SentenceEncoder, "name" | "dim" | "embed">;
  recipe: EmbedRecipe;
}

export interface IngestProgress {
  /** Line (or Parquet row) of the corpus reached. */
  line: number;
  added: number;
  skipped: number;
  alreadyIndexed: number;
  phase: "read" | "finalise";
}

export interface IngestOptions {
  format?: CorpusFormat;
  vectors?: VectorSpec[];
  /** Abstracts per commit (default 256 with vectors, 4096 without). */
  batchSize?: number;
  onProgress?: (p: IngestProgress) => void;
  /** Each skipped row, with its line; without it skips are still counted in the result. */
  onSkip?: (line: number, reason: string) => void;
  /** Vector sets of at least this many docs get IVF lists for fast approximate search (default IVF_MIN_DOCS). */
  ivfMinDocs?: number;
}

/**
 * Below this size exhaustive dense search takes a few ms and stays exact (the quality figures are measured so);
 * above it an IVF index is built at finalise.
 */
export const IVF_MIN_DOCS = 50_000;

export interface IngestResult {
  dir: string;
  added: number;
  skipped: number;
  alreadyIndexed: number;
  total: number;
  resumed: boolean;
}

async function fingerprint(path: string): Promise<{ hash: string; bytes: number }> {
  const h = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    h.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { hash: h.digest("hex"), bytes };
}

/** An abstract's sentences as the index stores them (training on our own pairs splits them the same way). */
export function storedSentences(a: Pick<CorpusAbstract, "abstract" | "sentences">): string[] {
  const sentences = a.sentences?.length ? a.sentences : splitSentences(a.abstract);
  return sentences.length ? sentences : [a.abstract];
}

function toStored(a: CorpusAbstract): StoredDoc {
  const doc: StoredDoc = {
    id: a.id,
    abstract: a.abstract,
    sentences: storedSentences(a),
  };
  if (a.title) doc.title = a.title;
  if (a.doi) doc.doi = a.doi;
  if (a.url) doc.url = a.url;
  if (a.year) doc.year = a.year;
  return doc;
}

/** Streams the committed docs of docs.jsonl (the file is cut back to the commit point first), decoded. */
async function* storedDocs(dir: string): AsyncGenerator<{ doc: StoredDoc; bytes: number }> {
  const path = join(dir, FILES.docs);
  if (!existsSync(path)) return;
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  for await (const line of rl) {
    n++;
    if (line === "") continue;
    let doc: StoredDoc;
    try {
      doc = decodeDoc(line);
    } catch {
      throw new DataError(
        path,
        "damaged index file (a line is not a stored abstract); delete the index folder and ingest again",
        { line: n },
      );
    }
    yield { doc, bytes: Buffer.byteLength(line) + 1 };
  }
}

/** Cuts an append-only file back to its commit point; one shorter than that was damaged outside of ingest. */
async function cutTo(path: string, bytes: number): Promise<void> {
  const size = existsSync(path) ? (await stat(path)).size : 0;
  if (size < bytes)
    throw new DataError(
      path,
      `index file is ${size} bytes, shorter than its commit point (${bytes}): truncated outside of ingest; delete the index folder and ingest again`,
    );
  await truncate(path, bytes);
}

/** Refuses vector specs that disagree with the index: another encoder or recipe, or a set left out. */
function checkVectors(dir: string, m: Manifest, specs: VectorSpec[]): void {
  const describe = (name: string, encoder: string, text: string) => `${name}=${encoder}/${text}`;
  const had = Object.entries(m.vectors).map(([k, v]) => describe(k, v.encoder, v.text));
  const want = specs.map((s) => describe(s.name, s.encoder.name, s.recipe.spec));
  const clash = specs.find((s) => {
    const v = m.vectors[s.name];
    return v && (v.encoder !== s.encoder.name || v.text !== s.recipe.spec || v.dim !== s.encoder.dim);
  });
  const missing = Object.keys(m.vectors).filter((k) => !specs.some((s) => s.name === k));
  if (clash || missing.length) {
    throw new DataError(
      dir,
      `the index was built with vectors [${had.join(", ") || "none"}], this ingest asks for [${want.join(", ") || "none"}]; use the same options or a new --index directory`,
    );
  }
}

/** Opens the manifest of an existing index for appending, or creates a new one; cuts files to the commit point. */
async function prepare(dir: string, specs: VectorSpec[]): Promise<{ manifest: Manifest; resumed: boolean }> {
  await mkdir(dir, { recursive: true });
  if (existsSync(join(dir, FILES.manifest))) {
    const manifest = readManifest(dir);
    checkVectors(dir, manifest, specs);
    if (manifest.complete) {
      // From here on the files change: the index is refused (never read half-updated) until this ingest ends.
      manifest.complete = false;
      delete manifest.files;
      await writeManifest(dir, manifest);
      crashPoint("prepare: index marked incomplete");
    }
    await cutTo(join(dir, FILES.docs), manifest.committed.bytes);
    for (const s of specs) {
      const file = join(dir, FILES.vectors(s.name));
      if (!manifest.vectors[s.name]) {
        // A vector set new to this index: it starts empty and catches up (backfill) before new docs come in.
        manifest.vectors[s.name] = {
          encoder: s.encoder.name,
          dim: s.encoder.dim,
          text: s.recipe.spec,
          docs: 0,
        };
        await writeFile(file, "");
      }
      await cutTo(file, manifest.vectors[s.name].docs * s.encoder.dim * 4);
    }
    return { manifest, resumed: true };
  }
  const manifest: Manifest = {
    schema: SCHEMA_VERSION,
    createdAt: new Date().toISOString(),
    vectors: Object.fromEntries(
      specs.map((s) => [
        s.name,
        { encoder: s.encoder.name, dim: s.encoder.dim, text: s.recipe.spec, docs: 0 },
      ]),
    ),
    sources: [],
    committed: { docs: 0, bytes: 0 },
    complete: false,
  };
  await writeFile(join(dir, FILES.docs), "");
  for (const s of specs) await writeFile(join(dir, FILES.vectors(s.name)), "");
  await writeManifest(dir, manifest);
  return { manifest, resumed: false };
}

export async function ingest(
  corpusPath: string,
  dirArg: string,
  options: IngestOptions = {},
): Promise<IngestResult> {
  const dir = resolve(dirArg);
  const specs = options.vectors ?? [];
  const batchSize = options.batchSize ?? (specs.length ? 256 : 4096);
  try {
    await stat(corpusPath);
  } catch {
    throw new DataError(corpusPath, "corpus file not found or not readable");
  }
  const { manifest, resumed } = await prepare(dir, specs);
  const known = new Set<string>();
  // BM25, offsets and ids grow with each commit; the docs already committed are read back once, here.
  const built: Built = { bm25: new Bm25Builder(), offsets: [0], ids: [], sentences: 0 };
  const addBuilt = (d: StoredDoc, lineBytes: number) => {
    built.bm25.add(d.title ?? "", d.abstract);
    built.sentences += d.sentences.length;
    built.ids.push(d.id);
    built.offsets.push(built.offsets[built.offsets.length - 1] + lineBytes);
  };
  for await (const { doc, bytes } of storedDocs(dir)) {
    known.add(doc.id);
    addBuilt(doc, bytes);
  }
  const { hash, bytes } = await fingerprint(corpusPath);

  const firstLine = new Map<string, number>();
  let added = 0;
  let skipped = 0;
  let alreadyIndexed = 0;
  let line = 0;
  const progress = (phase: IngestProgress["phase"]) =>
    options.onProgress?.({ line, added, skipped, alreadyIndexed, phase });
  const skip = (at: number, reason: string) => {
    skipped++;
    options.onSkip?.(at, reason);
  };

  const appendVectors = async (spec: VectorSpec, docs: StoredDoc[]) => {
    const { dim } = spec.encoder;
    const vectors = await spec.encoder.embed(docs.map((d) => spec.recipe.text(d)));
    const flat = new Float32Array(docs.length * dim);
    vectors.forEach((x, i) => {
      if (x.length !== dim)
        throw new Error(`encoder ${spec.encoder.name} returned ${x.length} dims, expected ${dim}`);
      flat.set(x, i * dim);
    });
    await appendFile(join(dir, FILES.vectors(spec.name)), new Uint8Array(flat.buffer));
    crashPoint(`read: vectors ${spec.name} appended`);
    manifest.vectors[spec.name].docs += docs.length;
  };

  // Vector sets behind the docs (added to an existing index, or interrupted while catching up) catch up first.
  for (const spec of specs) {
    let done = 0;
    let pending: StoredDoc[] = [];
    const flush = async () => {
      await appendVectors(spec, pending);
      pending = [];
      manifest.complete = false;
      await writeManifest(dir, manifest);
    };
    for await (const { doc } of storedDocs(dir)) {
      if (done++ < manifest.vectors[spec.name].docs) continue;
      pending.push(doc);
      if (pending.length >= batchSize) await flush();
    }
    if (pending.length) await flush();
  }

  const commit = async (batch: StoredDoc[]) => {
    if (batch.length === 0) return;
    for (const spec of specs) await appendVectors(spec, batch);
    // Each line encoded straight into one buffer: joining first cost more than the encoding itself.
    const lines = batch.map(encodeDoc);
    const sizes = lines.map((l) => Buffer.byteLength(l) + 1);
    const text = Buffer.allocUnsafe(sizes.reduce((a, b) => a + b, 0));
    for (let i = 0, at = 0; i < lines.length; i++) {
      at += text.write(lines[i], at);
      text[at++] = 10;
      addBuilt(batch[i], sizes[i]);
    }
    await appendFile(join(dir, FILES.docs), text);
    crashPoint("read: docs appended");
    manifest.committed = {
      docs: manifest.committed.docs + batch.length,
      bytes: manifest.committed.bytes + text.length,
    };
    manifest.complete = false;
    await writeManifest(dir, manifest);
    added += batch.length;
    progress("read");
  };

  let batch: StoredDoc[] = [];
  // One batch is embedded and written while the next one is read.
  let inFlight: Promise<void> = Promise.resolve();
  for await (const item of readCorpus(corpusPath, { format: options.format, onSkip: skip })) {
    line = item.line;
    const a = item.abstract;
    if (/[\r\n]/.test(a.id)) {
      skip(item.line, "id contains a line break");
      continue;
    }
    if (known.has(a.id)) {
      if (firstLine.has(a.id))
        skip(item.line, `duplicate id "${a.id}" (first on line ${firstLine.get(a.id)})`);
      else {
        alreadyIndexed++;
        firstLine.set(a.id, item.line);
      }
      continue;
    }
    known.add(a.id);
    firstLine.set(a.id, item.line);
    batch.push(toStored(a));
    if (batch.length >= batchSize) {
      await inFlight;
      inFlight = commit(batch);
      batch = [];
    }
  }
  await inFlight;
  await commit(batch);

  progress("finalise");
  const total = await finalise(dir, manifest, built);
  await buildVectorLists(dir, manifest, options.ivfMinDocs ?? IVF_MIN_DOCS);
  // Re-ingesting a recorded corpus that added nothing (a rerun after a finished ingest) records nothing new.
  const again = manifest.sources.some((s) => s.fingerprint === hash && s.path === resolve(corpusPath));
  if (!(again && added === 0))
    manifest.sources.push({ path: resolve(corpusPath), fingerprint: hash, bytes, added, skipped });
  manifest.files = indexChecksums(dir, manifest);
  crashPoint("complete: checksums taken");
  manifest.complete = true;
  await writeManifest(dir, manifest);
  return { dir, added, skipped, alreadyIndexed, total, resumed };
}

/** Checksums of every file of the finished index (docs and vectors up to the commit point), fsync'ed first. */
function indexChecksums(dir: string, m: Manifest): Record<string, FileChecksum> {
  const prefix: Record<string, number> = { [FILES.docs]: m.committed.bytes };
  const names: string[] = [FILES.docs, FILES.offsets, FILES.ids, FILES.terms, FILES.postings, FILES.lengths];
  for (const [name, info] of Object.entries(m.vectors)) {
    names.push(FILES.vectors(name));
    prefix[FILES.vectors(name)] = info.docs * info.dim * 4;
    if (existsSync(join(dir, FILES.ivf(name)))) names.push(FILES.ivf(name));
  }
  return checksumFiles(dir, names, prefix);
}

/** (Re)builds the IVF lists of each large vector set over all its docs; small sets have none. */
async function buildVectorLists(dir: string, manifest: Manifest, minDocs: number): Promise<void> {
  for (const [name, info] of Object.entries(manifest.vectors)) {
    const path = join(dir, FILES.ivf(name));
    // The build is deterministic and vectors are only appended: lists over the same count are still right.
    const wanted = info.docs > 0 && info.docs >= minDocs;
    if (wanted && ivfCount(path) === info.docs) continue;
    await rm(path, { force: true });
    crashPoint("ivf: old lists removed");
    if (!wanted) continue;
    const buf = await readFile(join(dir, FILES.vectors(name)));
    const data =
      buf.byteOffset % 4 === 0
        ? new Float32Array(buf.buffer, buf.byteOffset, info.docs * info.dim)
        : new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + info.docs * info.dim * 4));
    const ivf = buildIvf(data, info.docs, info.dim);
    crashPoint("ivf: lists built");
    writeIvf(`${path}.tmp`, ivf);
    crashPoint("ivf: lists written");
    await rename(`${path}.tmp`, path);
    crashPoint("ivf: lists renamed");
  }
}

interface Built {
  bm25: Bm25Builder;
  /** Byte offset of each doc line in docs.jsonl, then the end. */
  offsets: number[];
  ids: string[];
  /** Sentences over all docs (decides the corpus kind). */
  sentences: number;
}

/** Writes BM25, offsets and ids of the committed docs. Returns the number of docs. */
async function finalise(dir: string, manifest: Manifest, built: Built): Promise<number> {
  const { bm25, offsets, ids } = built;
  if (ids.length !== manifest.committed.docs || offsets[offsets.length - 1] !== manifest.committed.bytes) {
    throw new Error(
      `${dir}: docs.jsonl does not match the manifest's commit point; ingest into a new directory`,
    );
  }
  // The corpus kind, and so the tuned parameters, are decided over all docs, old and new.
  const settings = settingsFor(corpusKind(ids.length, built.sentences));
  bm25.params = { k1: settings.k1, b: settings.b, titleWeight: settings.titleWeight };
  await bm25.write(dir);
  crashPoint("finalise: bm25 written");
  manifest.bm25 = settings;
  await writeFileAtomic(join(dir, FILES.offsets), new Uint8Array(Float64Array.from(offsets).buffer));
  crashPoint("finalise: offsets written");
  await writeFileAtomic(join(dir, FILES.ids), ids.join("\n"));
  crashPoint("finalise: ids written");
  return ids.length;
}
