/**
 * README's first command on a machine that has nothing but the repository: a clone in an empty temporary folder
 * (no ../shared/data), no data variables, a real `npm ci` and `npm start`. The install is quiet, the first start
 * says what it is doing, and /v1/check answers with evidence from the built-in corpus. Slow (a real install and
 * a first index build, a few minutes on 2 cores); the timing target is in the first-run benchmark, not here.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { PACKAGE_ROOT } from "../src/data/paths.ts";
import type { CheckResult } from "../src/pipeline/result.ts";
import { freshClone, npmCi, npmStart } from "./fresh-clone.ts";

const inGit = (() => {
  try {
    execFileSync("git", ["-C", PACKAGE_ROOT, "rev-parse", "HEAD"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();
const skip = inGit ? false : "not a git checkout (nothing to clone)";

test("a fresh clone with nothing beside it: npm ci && npm start serve evidence from the built-in corpus", {
  skip,
  timeout: 900_000,
}, async () => {
  const clone = await freshClone();
  try {
    assert.deepEqual(readdirSync(clone.root), ["climatecheck"], "nothing beside the clone (no ../shared)");
    const ci = await npmCi(clone.repo);
    // Quiet: no warning from our own config, no skipped-install-script list, no download of CUDA files.
    assert.doesNotMatch(ci.output, /npm warn|npm WARN|Unknown project config|install-scripts/, ci.output);
    assert.ok(!existsSync(join(clone.repo, "node_modules", "onnxruntime-node")), "no ONNX runtime installed");
    assert.ok(existsSync(join(clone.repo, "dist", "cli", "main.js")), "npm ci built the command");

    const server = await npmStart(clone.repo);
    try {
      const { lines, info } = server;
      assert.ok(
        lines.some((l) => l.includes("building the default index (1/1) from the built-in demo corpus")),
        lines.join("\n"),
      );
      // Not a terminal here, so progress comes as lines with done/total and rate.
      assert.ok(
        lines.some((l) => /^index: \d+\/4330 lines \(\d+%\) · \d+ added · [\d.]+\/s/.test(l)),
        lines.join("\n"),
      );
      const corpus = info.corpus as { name: string; abstracts: number; builtin: boolean; note: string };
      assert.deepEqual([corpus.abstracts, corpus.builtin], [BUILTIN_CORPUS.abstracts, true]);
      assert.match(corpus.note, /small demo corpus.*data pull/);
      // npm's blank lines aside; request logs come later.
      const startup = lines.filter((l) => l.trim() !== "" && !l.startsWith('{"time"'));
      assert.equal(new Set(startup).size, startup.length, `no line twice:\n${startup.join("\n")}`);

      const health = (await (await fetch(`${server.url}/healthz`)).json()) as {
        abstracts: number;
        corpus: { builtin: boolean };
      };
      assert.deepEqual([health.abstracts, health.corpus.builtin], [4330, true]);

      const res = await fetch(`${server.url}/v1/check`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ claim: "Rising CO2 emissions are warming the climate.", k: 5 }),
      });
      assert.equal(res.status, 200);
      const r = (await res.json()) as CheckResult;
      assert.equal(r.evidence.length, 5);
      for (const e of r.evidence) {
        assert.match(e.abstract_id, /^arXiv:/);
        assert.ok(e.url?.startsWith("https://arxiv.org/abs/") || e.doi, JSON.stringify(e));
        assert.ok(e.title && e.title.length > 0);
      }
      // Abstracts, not single sentences: most items have several sentences.
      assert.ok(r.evidence.filter((e) => e.sentences.length >= 3).length >= 4, JSON.stringify(r.evidence));
    } finally {
      await server.stop();
    }
  } finally {
    await clone.remove();
  }
});
