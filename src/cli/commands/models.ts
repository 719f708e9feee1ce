/**
 * `climatecheck models pull|list`: pretrained ONNX models from the model hub into the local cache
 * ($CLIMATECHECK_HOME/models), by repository or by the profile that names them (see docs/models.md).
 */
import { existsSync, readFileSync } from "node:fs";
import type { Command } from "commander";
import { HUB_BASE_URL, HUB_REVISION, hubToken, PullError } from "../../data/download.ts";
import { DataError } from "../../data/errors.ts";
import {
  ONNX_DTYPES,
  type OnnxDtype,
  TRANSFORMERS_INSTALL,
  TRANSFORMERS_PACKAGE,
  transformersInstalled,
} from "../../encoders/onnx-folder.ts";
import { listPulled, modelsDir, pulledFolder, REPO_ID } from "../../models/cache.ts";
import { modelRefs, PROFILES_DIR, profileFile, shippedProfiles } from "../../models/profile.ts";
import { pullModel } from "../../models/pull.ts";
import { downloadProgress } from "../download-progress.ts";

interface Wanted {
  repo: string;
  revision: string;
  dtypes: Set<OnnxDtype>;
}

const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;

function readJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    throw new DataError(file, `not a readable JSON file (${(e as Error).message})`);
  }
}

/** The models the arguments name: REPO[@REVISION] as given, a profile's with their own revision and dtype. */
export function wantedModels(targets: string[], revision: string, dtype: OnnxDtype): Wanted[] {
  const byKey = new Map<string, Wanted>();
  const add = (repo: string, rev: string, d: OnnxDtype) => {
    const key = `${repo}@${rev}`;
    const w = byKey.get(key) ?? { repo, revision: rev, dtypes: new Set<OnnxDtype>() };
    w.dtypes.add(d);
    byKey.set(key, w);
  };
  for (const t of targets) {
    const at = t.lastIndexOf("@");
    const repo = at > 0 ? t.slice(0, at) : t;
    // A file (profiles/x.json) can look like OWNER/NAME: a .json name or an existing file is a profile.
    const isFile = t.endsWith(".json") || existsSync(t);
    if (!isFile && REPO_ID.test(repo)) {
      const rev = at > 0 ? t.slice(at + 1) : revision;
      if (rev === "") throw new DataError(t, "empty revision after @");
      add(repo, rev, dtype);
      continue;
    }
    if (t.includes("/") && !isFile)
      throw new DataError(t, "not a hub repository OWNER/NAME[@REVISION] nor a profile file (.json)");
    const file = profileFile(t);
    const refs = modelRefs(readJson(file), file);
    if (refs.length === 0) throw new DataError(file, "the profile names no hub models (nothing to pull)");
    for (const r of refs) add(r.repo, r.revision, r.dtype);
  }
  return [...byKey.values()];
}

function pull(program: Command): void {
  program
    .command("pull")
    .description("Download ONNX models from the model hub into the local cache; resumable, checksummed")
    .argument(
      "<targets...>",
      `OWNER/NAME[@REVISION] (a model repository), a shipped profile (${shippedProfiles().join(", ")}) or a profile file`,
    )
    .option(
      "--revision <rev>",
      "revision of each repository given without @REVISION (branch, tag or commit)",
      HUB_REVISION,
    )
    .option(
      "--dtype <dtype>",
      `ONNX file of each repository given directly (${ONNX_DTYPES.join(", ")}); a profile's models use the profile's`,
      "fp32",
    )
    .option("--base-url <url>", "model hub", HUB_BASE_URL)
    .action(
      async (targets: string[], opts: { revision: string; dtype: string; baseUrl: string }, cmd: Command) => {
        if (!(ONNX_DTYPES as readonly string[]).includes(opts.dtype))
          cmd.error(`--dtype must be one of ${ONNX_DTYPES.join(", ")}`);
        const wanted = wantedModels(targets, opts.revision, opts.dtype as OnnxDtype);
        const hub = { baseUrl: opts.baseUrl, token: hubToken() };
        for (const w of wanted) {
          const progress = downloadProgress(process.stderr, `${w.repo}/`);
          try {
            const r = await pullModel(w.repo, {
              hub,
              revision: w.revision,
              dtypes: [...w.dtypes],
              onProgress: progress.onProgress,
              onFile: progress.onFile,
            });
            const pinned = r.revision === r.commit ? r.commit : `${r.revision} = ${r.commit}`;
            process.stderr.write(
              `${r.repo}@${pinned}: ${r.downloaded.length} downloaded, ${r.present.length} already here (${mb(r.bytes)}) in ${r.dir}\n`,
            );
          } catch (e) {
            progress.stop();
            if (!(e instanceof PullError)) throw e;
            process.stderr.write(`climatecheck: ${e.message}\n`);
            process.exitCode = 1;
            return;
          }
        }
        if (!transformersInstalled())
          process.stderr.write(
            `note: running these models needs the optional package ${TRANSFORMERS_PACKAGE}, not installed here: ${TRANSFORMERS_INSTALL}\n`,
          );
      },
    );
}

function list(program: Command): void {
  program
    .command("list")
    .description("Show the pulled models and which models each shipped profile needs")
    .option("--json", "print one JSON object")
    .action((opts: { json?: boolean }) => {
      const pulled = listPulled();
      const profiles = shippedProfiles().map((name) => {
        const file = `${PROFILES_DIR}/${name}.json`;
        return {
          name,
          models: modelRefs(readJson(file), file).map((m) => ({
            ...m,
            pulled: pulledFolder(m.repo, m.revision, m.dtype) !== undefined,
          })),
        };
      });
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ dir: modelsDir(), pulled, profiles }, null, 2)}\n`);
        return;
      }
      const out = [`Pulled models (${modelsDir()}):`];
      if (pulled.length === 0) out.push("  none");
      for (const p of pulled) {
        const refs = p.refs.length ? ` (${p.refs.join(", ")})` : "";
        out.push(`  ${p.repo}@${p.commit.slice(0, 7)}${refs}  ${p.onnx.join(", ")}  ${mb(p.bytes)}`);
      }
      out.push("", "Shipped profiles (climatecheck models pull NAME fetches a profile's models):");
      for (const p of profiles) {
        const have = p.models.filter((m) => m.pulled).length;
        const state = p.models.length === 0 ? "no hub models" : `${have} of ${p.models.length} pulled`;
        out.push(`  ${p.name}: ${state}`);
        for (const m of p.models)
          out.push(`    ${m.where}: ${m.repo}@${m.revision} (${m.dtype}) ${m.pulled ? "pulled" : "missing"}`);
      }
      process.stdout.write(`${out.join("\n")}\n`);
    });
}

export function register(program: Command): void {
  const models = program
    .command("models")
    .description("Pretrained ONNX models from the model hub for profiles");
  pull(models);
  list(models);
}
