// `models pull` against a model hub served on loopback (test/hub-fixture.ts) holding the tiny fixture models in hub
// layout: what is fetched, resume, checksum mismatch, 404, 401, profiles resolved from the cache, and `check
// --profile` on the pulled models through the CLI.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { type HubAccess, isCommit, PullError } from "../src/data/download.ts";
import { DataError } from "../src/data/errors.ts";
import {
  loadTransformers,
  TRANSFORMERS_PACKAGE,
  transformersInstalled,
} from "../src/encoders/onnx-folder.ts";
import { TITLE_AND_ABSTRACT } from "../src/index/embed-text.ts";
import { ingest } from "../src/index/ingest.ts";
import { readManifest } from "../src/index/schema.ts";
import { listPulled, modelFolder, pulledFolder, readRef } from "../src/models/cache.ts";
import { PROFILES_DIR, profileInfo, shippedProfiles } from "../src/models/profile.ts";
import { pullModel } from "../src/models/pull.ts";
import { addVectorSets } from "../src/pipeline/default-index.ts";
import { readRetrievalConfig } from "../src/retrieval/byo.ts";
import { readVerifierConfig } from "../src/verification/config.ts";
import { folderFiles, type Hub, type HubRepo, sha256, startHub } from "./hub-fixture.ts";
import { fakeEncoder, tempDir, writeCorpus } from "./retrieval-fixtures.ts";
import { tinyModels } from "./tiny-models-fixture.ts";

const runtime = await loadTransformers().then(
  () => ({ skip: false }),
  () => ({ skip: `${TRANSFORMERS_PACKAGE} is not installed (optional; see docs/models.md)` }),
);

const dir = tempDir("models-pull-");
const home = join(dir, "home");
process.env.CLIMATECHECK_HOME = home;
const commitOf = (repo: string) => createHash("sha1").update(repo).digest("hex");

let hub: Hub;
let access: HubAccess;
const profilePath = join(dir, "profile.json");

/** A tiny model in hub layout, with files the pull must leave alone (README, other dtypes). */
function repoOf(name: string, folder: string, token?: string) {
  const files = folderFiles(folder);
  files.set("README.md", Buffer.from("# tiny\n"));
  files.set(".gitattributes", Buffer.from("*.onnx filter=lfs\n"));
  files.set("onnx/model_fp16.onnx", Buffer.from("not fetched for fp32"));
  files.set("onnx/model_quantized.onnx", files.get("onnx/model.onnx") as Buffer);
  return { commit: commitOf(name), files, token };
}

before(async () => {
  const m = tinyModels();
  hub = await startHub({
    "tiny/embedding": repoOf("tiny/embedding", m.embedding),
    "tiny/cross-encoder": repoOf("tiny/cross-encoder", m.crossEncoder),
    "tiny/nli": repoOf("tiny/nli", m.nli),
    "tiny/gated": repoOf("tiny/gated", m.nli, "s3cret"),
    "tiny/pytorch-only": {
      commit: commitOf("tiny/pytorch-only"),
      files: new Map([
        ["config.json", Buffer.from("{}")],
        ["tokenizer.json", Buffer.from("{}")],
        ["tokenizer_config.json", Buffer.from("{}")],
        ["pytorch_model.bin", Buffer.from("weights")],
      ]),
    },
  });
  access = { baseUrl: hub.baseUrl };
  writeFileSync(
    profilePath,
    JSON.stringify({
      profile: "tiny",
      retrieval: {
        backend: "onnx",
        dense: { repo: "tiny/embedding", revision: "main", maxLength: 64 },
        rerank: {
          models: [{ repo: "tiny/cross-encoder", revision: commitOf("tiny/cross-encoder"), dtype: "q8" }],
        },
      },
      verification: { backend: "onnx", repo: "tiny/nli", revision: commitOf("tiny/nli") },
    }),
  );
  writeCorpus(dir);
});
after(() => hub.close());

test("pull fetches the ONNX layout at the commit the branch points to, verified, and records it", async () => {
  hub.requests = [];
  const r = await pullModel("tiny/nli", { hub: access, revision: "main", dtypes: ["fp32"] });
  const commit = commitOf("tiny/nli");
  assert.equal(r.commit, commit);
  assert.equal(r.dir, modelFolder("tiny/nli", commit));
  assert.deepEqual(r.downloaded.sort(), [
    "config.json",
    "onnx/model.onnx",
    "tokenizer.json",
    "tokenizer_config.json",
  ]);
  // Fetched at the commit, never at the moving branch; README and other dtypes left alone.
  for (const q of hub.requests) assert.match(q.url, new RegExp(`^/tiny/nli/resolve/${commit}/`));
  const want = hub.repos.get("tiny/nli")?.files.get("onnx/model.onnx") as Buffer;
  assert.deepEqual(readFileSync(join(r.dir, "onnx/model.onnx")), want);
  const m = JSON.parse(readFileSync(join(r.dir, "manifest.json"), "utf8"));
  assert.equal(m.repo, "tiny/nli");
  assert.equal(m.commit, commit);
  assert.equal(m.revision, "main");
  assert.equal(m.files["onnx/model.onnx"].verified, "sha256");
  assert.equal(m.files["onnx/model.onnx"].sha256, sha256(want));
  assert.equal(m.files["config.json"].verified, "git-oid");
  assert.equal(readRef("tiny/nli", "main"), commit);
  assert.equal(pulledFolder("tiny/nli", "main", "fp32"), r.dir);
  assert.equal(pulledFolder("tiny/nli", commit, "q8"), undefined, "another dtype is not pulled");

  hub.requests = [];
  const again = await pullModel("tiny/nli", { hub: access, revision: commit, dtypes: ["fp32"] });
  assert.equal(again.present.length, 4);
  assert.equal(hub.requests.length, 0, "nothing is downloaded twice");
  assert.ok(listPulled().some((p) => p.repo === "tiny/nli" && p.refs.includes("main")));
});

test("an interrupted download keeps its .part and the next pull resumes it with Range", async () => {
  hub.dropNext = true;
  hub.requests = [];
  await assert.rejects(
    pullModel("tiny/embedding", { hub: access, revision: "main", dtypes: ["fp32"], retries: 0 }),
    (e: unknown) => e instanceof PullError && /run again to resume/.test(e.message),
  );
  const first = hub.requests[0].url.split("/").slice(5).join("/");
  const part = join(modelFolder("tiny/embedding", commitOf("tiny/embedding")), `${first}.part`);
  const kept = (await stat(part)).size;
  assert.ok(kept > 0);
  hub.requests = [];
  const r = await pullModel("tiny/embedding", {
    hub: access,
    revision: "main",
    dtypes: ["fp32"],
    retries: 0,
  });
  assert.equal(hub.requests[0].range, `bytes=${kept}-`);
  const want = hub.repos.get("tiny/embedding")?.files.get(first) as Buffer;
  assert.deepEqual(readFileSync(join(r.dir, first)), want);
  assert.equal(existsSync(part), false);
});

test("a checksum mismatch names both sums and keeps nothing of that file", async () => {
  hub.wrongSha = "onnx/model_quantized.onnx";
  try {
    const body = hub.repos.get("tiny/cross-encoder")?.files.get("onnx/model_quantized.onnx") as Buffer;
    await assert.rejects(
      pullModel("tiny/cross-encoder", { hub: access, revision: "main", dtypes: ["q8"] }),
      (e: unknown) =>
        e instanceof PullError &&
        e.message.includes(
          `/tiny/cross-encoder/resolve/${commitOf("tiny/cross-encoder")}/onnx/model_quantized.onnx`,
        ) &&
        e.message.includes(`checksum mismatch: expected sha256 ${"0".repeat(64)}, got ${sha256(body)}`),
    );
  } finally {
    hub.wrongSha = undefined;
  }
  const folder = modelFolder("tiny/cross-encoder", commitOf("tiny/cross-encoder"));
  assert.equal(existsSync(join(folder, "onnx/model_quantized.onnx")), false);
  assert.equal(existsSync(join(folder, "onnx/model_quantized.onnx.part")), false);
  assert.equal(pulledFolder("tiny/cross-encoder", "main", "q8"), undefined);
});

test("404 names the URL; 401 says to set HF_TOKEN, and the token opens a gated repo", async () => {
  await assert.rejects(
    pullModel("tiny/missing", { hub: access, revision: "main", dtypes: ["fp32"] }),
    (e: unknown) =>
      e instanceof PullError &&
      /\/api\/models\/tiny\/missing\/revision\/main: the hub answered HTTP 404/.test(e.message),
  );
  await assert.rejects(
    pullModel("tiny/gated", { hub: access, revision: "main", dtypes: ["fp32"] }),
    (e: unknown) => e instanceof PullError && /HTTP 401 .*gated or private: set \$HF_TOKEN/.test(e.message),
  );
  await assert.rejects(
    pullModel("tiny/gated", { hub: { ...access, token: "wrong" }, revision: "main", dtypes: ["fp32"] }),
    (e: unknown) => e instanceof PullError && /HTTP 401 .*token in \$HF_TOKEN was refused/.test(e.message),
  );
  hub.requests = [];
  const r = await pullModel("tiny/gated", {
    hub: { ...access, token: "s3cret" },
    revision: "main",
    dtypes: ["fp32"],
  });
  assert.equal(r.downloaded.length, 4);
  assert.ok(hub.requests.every((q) => q.auth === "Bearer s3cret"));
});

test("the token goes to the hub only, not to the host a download is redirected to", async () => {
  const cdn = await startHub({ "tiny/gated": hub.repos.get("tiny/gated") as HubRepo });
  const cdnRepo = cdn.repos.get("tiny/gated") as HubRepo;
  cdn.repos.set("tiny/gated", { ...cdnRepo, token: undefined });
  hub.cdn = cdn.baseUrl;
  try {
    const r = await pullModel("tiny/gated", {
      hub: { ...access, token: "s3cret" },
      revision: "main",
      dtypes: ["q8"],
    });
    assert.deepEqual(r.downloaded, ["onnx/model_quantized.onnx"]);
    assert.equal(cdn.requests.length, 1);
    assert.equal(cdn.requests[0].auth, undefined);
  } finally {
    hub.cdn = undefined;
    await cdn.close();
  }
});

test("every shipped profile names its hub models as repo + revision (+ dtype); pinned ones by a 40-hex commit", () => {
  for (const name of shippedProfiles()) {
    const info = profileInfo(join(PROFILES_DIR, `${name}.json`));
    assert.equal(info.name, name);
    for (const m of info.models) {
      assert.match(m.repo, /^Xenova\//, `${name}: ${m.repo}`);
      // The one unpinned model is documented as such in docs/models.md.
      if (m.repo !== "Xenova/e5-large-v2")
        assert.ok(isCommit(m.revision), `${name}: ${m.repo}@${m.revision}`);
    }
  }
  assert.equal(profileInfo(join(PROFILES_DIR, "light-cpu.json")).models.length, 3);
  assert.equal(transformersInstalled("climatecheck-no-such-package"), false);
});

test("a repository without the ONNX layout is bad input naming what it holds", async () => {
  await assert.rejects(
    pullModel("tiny/pytorch-only", { hub: access, revision: "main", dtypes: ["fp32"] }),
    (e: unknown) =>
      e instanceof DataError &&
      /no onnx\/model\.onnx or model\.onnx for dtype fp32; ONNX files there: none/.test(e.message),
  );
});

test("a profile's models resolve from the cache; one not pulled names the pull command", async () => {
  // tiny/cross-encoder q8 failed its checksum above, so it is not pulled yet.
  await assert.rejects(
    readRetrievalConfig(profilePath),
    (e: unknown) =>
      e instanceof DataError &&
      e.message.includes(
        `model not pulled: tiny/cross-encoder@${commitOf("tiny/cross-encoder")} (q8, retrieval.rerank.models.0)`,
      ) &&
      e.message.includes(`run \`climatecheck models pull ${JSON.stringify(profilePath)}\``),
  );
  await assert.rejects(
    readVerifierConfig("profiles/organisers-2026.json"),
    /not pulled: Xenova\/nli-deberta-v3-base@215b6d3.*run `climatecheck models pull organisers-2026`/,
  );
  await pullModel("tiny/cross-encoder", { hub: access, revision: "main", dtypes: ["q8"] });
  const retrieval = await readRetrievalConfig(profilePath);
  assert.ok(retrieval.backend === "onnx");
  assert.equal(retrieval.dense?.modelDir, modelFolder("tiny/embedding", commitOf("tiny/embedding")));
  assert.equal(retrieval.dense?.maxLength, 64);
  assert.equal(retrieval.rerank?.models[0].dtype, "q8");
  const verifier = await readVerifierConfig(profilePath);
  assert.deepEqual(verifier, { backend: "onnx", modelDir: modelFolder("tiny/nli", commitOf("tiny/nli")) });
  assert.deepEqual(
    profileInfo(profilePath).models.map((x) => [x.stage, x.repo]),
    [
      ["retrieval.dense", "tiny/embedding"],
      ["retrieval.rerank.models.0", "tiny/cross-encoder"],
      ["verification", "tiny/nli"],
    ],
  );
});

// Through the CLI, in a fresh home: the exit codes and the real-use path on the tiny models.
const exec = promisify(execFile);
const cliHome = join(dir, "cli-home");
const run = (args: string[], env: Record<string, string> = {}) =>
  exec(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    env: { ...process.env, CLIMATECHECK_HOME: cliHome, ...env },
  });
const fails = async (args: string[], env: Record<string, string> = {}) => {
  try {
    await run(args, env);
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, stderr: err.stderr };
  }
  assert.fail(`expected ${args.join(" ")} to fail`);
};

test("CLI: a missing model stops check --profile with the pull command (2); 404 and 401 exit 1; bad names 2", async () => {
  const missing = await fails(["check", "Sea ice is melting", "--profile", profilePath]);
  assert.equal(missing.code, 2);
  assert.match(
    missing.stderr,
    /: model not pulled: tiny\/nli@[0-9a-f]{40} \(fp32, verification\); run `climatecheck models pull "/,
  );
  const notFound = await fails(["models", "pull", "tiny/missing", "--base-url", hub.baseUrl]);
  assert.equal(notFound.code, 1);
  assert.match(
    notFound.stderr,
    /climatecheck: http:\/\/127\.0\.0\.1:\d+\/api\/models\/tiny\/missing\/revision\/main: the hub answered HTTP 404/,
  );
  const gated = await fails(["models", "pull", "tiny/gated", "--base-url", hub.baseUrl]);
  assert.equal(gated.code, 1);
  assert.match(gated.stderr, /HTTP 401/);
  const bad = await fails(["models", "pull", "not-a-profile-or-repo"]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /neither a shipped profile/);
  // A relative profile path looks like OWNER/NAME; it is read as the profile it is.
  const noModels = await fails(["models", "pull", "profiles/narratives-chat.json"]);
  assert.equal(noModels.code, 2);
  assert.match(noModels.stderr, /narratives-chat\.json: the profile names no hub models/);
});

test(
  "CLI: models pull PROFILE, then ingest and check --profile run on the pulled models",
  runtime,
  async () => {
    const pulled = await run(["models", "pull", profilePath, "--base-url", hub.baseUrl]);
    assert.match(pulled.stderr, new RegExp(`tiny/nli@${commitOf("tiny/nli")}: 4 downloaded`));
    assert.match(pulled.stderr, /tiny\/embedding@main = [0-9a-f]{40}: 4 downloaded/);
    const list = JSON.parse((await run(["models", "list", "--json"])).stdout) as {
      pulled: { repo: string }[];
    };
    assert.deepEqual(list.pulled.map((p) => p.repo).sort(), [
      "tiny/cross-encoder",
      "tiny/embedding",
      "tiny/nli",
    ]);

    const index = join(dir, "index");
    await run([
      "ingest",
      join(dir, "corpus.jsonl"),
      "--index",
      index,
      "--no-vectors",
      "--profile",
      profilePath,
    ]);
    const c = await run([
      "check",
      "Arctic warming melts sea ice",
      "--index",
      index,
      "--k",
      "2",
      "--json",
      "--profile",
      profilePath,
    ]);
    const result = JSON.parse(c.stdout) as { evidence: { label: string }[] };
    assert.equal(result.evidence.length, 2);
    for (const e of result.evidence) assert.equal(e.label, "Not Enough Information");
  },
);

test("a profile's dense set is added to an existing index once (serve/check --profile on the default index)", async () => {
  const index = join(dir, "catch-up");
  const spec = (name: string) => ({ name, encoder: fakeEncoder(`fake-${name}`), recipe: TITLE_AND_ABSTRACT });
  const a = spec("builtin-like");
  await ingest(join(dir, "corpus.jsonl"), index, { vectors: [a] });
  const b = spec("dense");
  const open = async () => ({ specs: [a, b, spec("not-in-index")], close: async () => {} });
  let said = -1;
  assert.equal(await addVectorSets(index, ["dense"], open, (docs) => (said = docs)), true);
  assert.equal(said, 8);
  const m = readManifest(index);
  assert.deepEqual(Object.keys(m.vectors).sort(), ["builtin-like", "dense"]);
  assert.equal(m.vectors.dense.docs, 8);
  assert.equal(m.committed.docs, 8);
  // Whole now: nothing is opened or embedded again.
  const calls = b.encoder.calls.length;
  assert.equal(await addVectorSets(index, ["dense"], open), false);
  assert.equal(b.encoder.calls.length, calls);
});
