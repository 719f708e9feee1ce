/**
 * The command line a newcomer meets: --version, usage errors (one line naming the command, then that command's
 * usage, exit 2, no line twice), progress lines when stderr is not a terminal, and a corpus ingested into an index
 * of the built-in demo corpus replacing it.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { BUILTIN_CORPUS } from "../src/data/builtin-corpus.ts";
import { openIndex } from "../src/index/open.ts";
import { tempDir, writeCorpus } from "./retrieval-fixtures.ts";

const run = promisify(execFile);
const dir = tempDir("cc-cli-usage-");
after(() => rm(dir, { recursive: true, force: true }));

const cli = (...args: string[]) =>
  run(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    env: { ...process.env, CLIMATECHECK_HOME: join(dir, "home") },
  });

/** stderr and exit code of a run that must fail. */
async function failing(...args: string[]): Promise<{ code: number; lines: string[] }> {
  try {
    await cli(...args);
  } catch (e) {
    const err = e as { code: number; stderr: string };
    return { code: err.code, lines: err.stderr.trimEnd().split("\n") };
  }
  throw new Error(`climatecheck ${args.join(" ")} succeeded`);
}

test("--version prints the package version", async () => {
  const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
  for (const flag of ["--version", "-V"]) {
    const { stdout } = await cli(flag);
    assert.equal(stdout, `${version}\n`);
  }
});

test("a bad option or value: one error line naming the command, then its usage, exit 2", async () => {
  const cases: [string[], RegExp, string][] = [
    [["check", "x", "--k", "0"], /^climatecheck check: --k must be a whole number from 1 to 50$/, "check"],
    [["check", "x", "--bogus"], /^climatecheck check: unknown option '--bogus'$/, "check"],
    [["serve", "--port", "x"], /^climatecheck serve: --port must be a whole number/, "serve"],
    [["serve", "--cors", "example.org"], /^climatecheck serve: --cors must be \* or an origin/, "serve"],
    [["data", "pull", "--nope"], /^climatecheck data pull: unknown option '--nope'$/, "data pull"],
    [["evaluate", "--task", "3"], /^climatecheck evaluate: .*must be 1 or 2/, "evaluate"],
    [["nosuch"], /^climatecheck: unknown command 'nosuch'$/, ""],
  ];
  for (const [args, first, command] of cases) {
    const { code, lines } = await failing(...args);
    const name = command ? `climatecheck ${command}` : "climatecheck";
    assert.equal(code, 2, args.join(" "));
    assert.equal(lines.length, 3, lines.join("\n"));
    assert.match(lines[0], first);
    assert.match(lines[1], new RegExp(`^Usage: ${name} \\[options\\]`));
    assert.equal(lines[2], `Run "${name} --help" for the options.`);
    assert.equal(new Set(lines).size, lines.length, "no line twice");
  }
});

test("ingest in a pipe prints progress lines; another corpus replaces the built-in demo corpus", async () => {
  const index = join(dir, "index");
  const built = await cli("ingest", BUILTIN_CORPUS.path, "--index", index, "--no-vectors");
  assert.match(built.stderr, /^ingest: 4330\/4330 lines \(100%\) · 4330 added · [\d.]+\/s$/m);
  const lines = built.stderr.trimEnd().split("\n");
  assert.equal(new Set(lines).size, lines.length, "no line twice");
  const corpus = writeCorpus(dir);
  const replaced = await cli("ingest", corpus, "--index", index, "--no-vectors");
  assert.match(replaced.stderr, /holds the built-in demo corpus; replacing it with/);
  assert.match(replaced.stderr, /8 added, 0 already indexed, 0 skipped, 8 abstracts in the index/);
  const opened = openIndex(index);
  assert.equal(opened.docs.size, 8);
  opened.close();
  // A second corpus extends a non-built-in index, as before.
  await mkdir(join(dir, "more"));
  const more = writeCorpus(join(dir, "more"), [
    { abstract_id: "m1", title: "More", abstract: "One more abstract here." },
  ]);
  const extended = await cli("ingest", more, "--index", index, "--no-vectors");
  assert.doesNotMatch(extended.stderr, /replacing/);
  assert.match(extended.stderr, /9 abstracts in the index/);
});
