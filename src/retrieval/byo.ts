/**
 * Retrieval with the user's own ONNX models (the "retrieval" section of a profile, see docs/byo-models.md "Bring your own
 * models"): stage 1 is BM25 plus, when configured, a dense list from a local embedding model, fused by reciprocal
 * rank fusion; then, when configured, one or several cross-encoders score the top N candidates and their rankings
 * are combined by reciprocal rank fusion. The built-in dense sets and the trained re-ranker are not used on this
 * path (the re-ranker's features are tied to the vector sets it was trained with).
 */
import { z } from "zod";
import { readJsonConfig } from "../data/config-file.ts";
import { DataError } from "../data/errors.ts";
import { ONNX_DTYPES } from "../encoders/onnx-folder.ts";
import { TITLE_AND_ABSTRACT } from "../index/embed-text.ts";
import type { VectorSpec } from "../index/ingest.ts";
import type { Manifest } from "../index/schema.ts";
import { type FusionRule, rrfFusion } from "./fusion.ts";
import { openCrossEncoder, openOnnxEmbedder, type PairScorer } from "./onnx-models.ts";
import type { QueryEncoder } from "./retriever.ts";

const DenseSchema = z
  .object({
    modelDir: z.string().min(1),
    /** Vector set name in the index (file vectors.NAME.f32). */
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9-]*$/, "lower-case letters, digits and dashes")
      .default("dense"),
    pooling: z.enum(["mean", "cls"]).default("mean"),
    normalize: z.boolean().default(true),
    queryPrefix: z.string().default(""),
    passagePrefix: z.string().default(""),
    maxLength: z.number().int().positive().default(512),
    batchSize: z.number().int().positive().default(32),
    dtype: z.enum(ONNX_DTYPES).default("fp32"),
    /** Dense candidates per claim. */
    depth: z.number().int().positive().default(200),
  })
  .strict();

const CrossEncoderSchema = z
  .object({
    modelDir: z.string().min(1),
    maxLength: z.number().int().positive().default(512),
    batchSize: z.number().int().positive().default(16),
    dtype: z.enum(ONNX_DTYPES).default("fp32"),
  })
  .strict();

const OnnxRetrievalSchema = z
  .object({
    backend: z.literal("onnx"),
    /** BM25 candidates per claim; default: the index's. */
    bm25Depth: z.number().int().positive().optional(),
    dense: DenseSchema.optional(),
    /**
     * rrf: the BM25 and dense lists united and fused by reciprocal rank fusion (k = fusionK); dense: the dense model
     * re-scores the BM25 candidates alone (the organisers' cascade: BM25 top 1,500, then e5 top 150).
     */
    fusion: z.enum(["rrf", "dense"]).default("rrf"),
    fusionK: z.number().positive().default(60),
    rerank: z
      .object({
        models: z.array(CrossEncoderSchema).min(1),
        /** Candidates (in fused order) each cross-encoder scores. */
        topN: z.number().int().positive().default(100),
        /** k of the reciprocal rank fusion of the cross-encoders' rankings. */
        rrfK: z.number().positive().default(60),
      })
      .strict()
      .optional(),
  })
  .strict();

export const RetrievalConfigSchema = z.discriminatedUnion("backend", [
  z.object({ backend: z.literal("builtin") }).strict(),
  OnnxRetrievalSchema,
]);
export type RetrievalConfig = z.input<typeof RetrievalConfigSchema>;
type OnnxRetrieval = z.output<typeof OnnxRetrievalSchema>;

/** The "retrieval" section of a profile; a profile without one, or no file, is the built-in retrieval. */
export async function readRetrievalConfig(path?: string): Promise<RetrievalConfig> {
  if (!path) return { backend: "builtin" };
  return readJsonConfig(path, RetrievalConfigSchema, "retrieval", { backend: "builtin" }, true);
}

/** Cross-encoder scores of the top N candidates, combined by RRF. */
export interface CrossEncoderStage {
  scorers: PairScorer[];
  topN: number;
  rrfK: number;
}

export interface ByoRetrieval {
  /** The dense vector set to build at ingest (none without a dense model). */
  specs: VectorSpec[];
  /** Its query encoder, by vector set name. */
  encoders: Record<string, QueryEncoder>;
  denseDepth: number;
  bm25Depth?: number;
  fusionRule: FusionRule;
  crossEncoders?: CrossEncoderStage;
  close(): Promise<void>;
}

/** Opens the configured models (ingest, and stage 1 alone, need only the dense one: `denseOnly`). */
export async function openByoRetrieval(config: RetrievalConfig, denseOnly = false): Promise<ByoRetrieval> {
  if (config.backend !== "onnx") throw new Error("openByoRetrieval: not an onnx retrieval config");
  const c: OnnxRetrieval = OnnxRetrievalSchema.parse(config);
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const f of closers.reverse()) await f();
  };
  try {
    const k = c.fusionK;
    const out: ByoRetrieval = {
      specs: [],
      encoders: {},
      denseDepth: 200,
      fusionRule: { name: `rrf k=${k}`, fuse: (cands) => rrfFusion(cands, k) },
      close,
    };
    if (c.fusion === "dense" && !c.dense)
      throw new DataError("retrieval", 'fusion "dense" needs a dense model (retrieval.dense)', {
        field: "fusion",
      });
    if (c.dense) {
      const d = c.dense;
      const e = await openOnnxEmbedder(d);
      closers.push(() => e.close());
      const passage = JSON.stringify(d.passagePrefix);
      out.specs.push({
        name: d.name,
        encoder: { name: e.name, dim: e.dim, embed: (texts) => e.embed(texts) },
        recipe: {
          spec: d.passagePrefix ? `prefix:${passage}+${TITLE_AND_ABSTRACT.spec}` : TITLE_AND_ABSTRACT.spec,
          text: (doc) => d.passagePrefix + TITLE_AND_ABSTRACT.text(doc),
        },
      });
      out.encoders[d.name] = { name: e.name, embed: (texts) => e.embed(texts.map((t) => d.queryPrefix + t)) };
      out.denseDepth = d.depth;
      if (c.fusion === "dense") {
        // Only BM25 finds candidates; the dense score orders them.
        out.denseDepth = 0;
        out.fusionRule = { name: "dense re-scores bm25", fuse: (cands) => cands.map((x) => x.dense[d.name]) };
      }
    }
    out.bm25Depth = c.bm25Depth;
    if (c.rerank && !denseOnly) {
      const scorers: PairScorer[] = [];
      for (const m of c.rerank.models) {
        const s = await openCrossEncoder(m);
        closers.push(() => s.close());
        scorers.push(s);
      }
      out.crossEncoders = { scorers, topN: c.rerank.topN, rrfK: c.rerank.rrfK };
    }
    return out;
  } catch (e) {
    await close();
    throw e;
  }
}

/** Refuses an index whose vectors were not built with the configured dense model (it would silently be BM25). */
export function checkDenseIndex(dir: string, manifest: Manifest, byo: ByoRetrieval): void {
  for (const spec of byo.specs) {
    const have = manifest.vectors[spec.name];
    if (have?.encoder === spec.encoder.name && have.text === spec.recipe.spec) continue;
    const sets = Object.entries(manifest.vectors).map(([n, v]) => `${n}=${v.encoder}`);
    throw new DataError(
      dir,
      `retrieval (dense): expected a vector set "${spec.name}" built with ${spec.encoder.name} (${spec.recipe.spec}), the index has [${sets.join(", ") || "none"}]; run \`climatecheck ingest CORPUS --index ${dir} --config FILE\` with the same profile`,
    );
  }
}
