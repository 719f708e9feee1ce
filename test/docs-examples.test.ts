/**
 * Every `climatecheck` example in README.md and docs/*.md still works. Examples that run here on their own are run:
 * `evaluate` on examples/ (its --html file goes to a temp folder), `check` (on the fixture index, --fast), the
 * version, the usage error shown in docs/cli.md, and the JSON profiles (read by the config readers). The rest need
 * the network (`data pull`), Redis (`queue`) or the official data (`ingest` of the real corpus) or stand for a family
 * of calls (synopses with FILE, [--options], a|b): their command must exist and each option must be one its --help
 * lists (read from the same program, built in process: one spawn per command cost a minute of the suite).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { Command } from "commander";
import { registerCommands } from "../src/cli/commands/index.ts";
import { ingest } from "../src/index/ingest.ts";
import { readNarrativesConfig } from "../src/narratives/config.ts";
import { readRetrievalConfig } from "../src/retrieval/byo.ts";
import { trainProgram } from "../src/train/program.ts";
import { resolveVerifierConfig } from "../src/verification/config.ts";
import { writeCorpus } from "./retrieval-fixtures.ts";

const dir = mkdtempSync(join(tmpdir(), "cc-docs-"));
let index = "";
before(async () => {
  index = join(dir, "index");
  await ingest(writeCorpus(dir), index);
});
after(() => rmSync(dir, { recursive: true, force: true }));

const PAGES = [
  "README.md",
  ...readdirSync("docs")
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

const cli = (args: string[]) =>
  spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    encoding: "utf8",
    env: { ...process.env, CLIMATECHECK_HOME: join(dir, "home") },
  });

interface Example {
  page: string;
  line: string;
  lang: string;
}

/** Fenced blocks (with their language) and inline code spans that start with `climatecheck`. */
function examples(): { commands: Example[]; blocks: Example[] } {
  const commands: Example[] = [];
  const blocks: Example[] = [];
  for (const page of PAGES) {
    const text = readFileSync(page, "utf8");
    for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```/gm)) {
      const [, lang, body] = m;
      blocks.push({ page, line: body, lang });
      if (lang !== "sh") continue;
      // Continuations: a trailing backslash, or an indented line under a synopsis.
      const joined = body.replace(/\\\n\s*/g, " ").replace(/\n {3,}(?=\[|--)/g, " ");
      for (const raw of joined.split("\n")) {
        const line = raw.replace(/\s+#.*$/, "").trim();
        if (/^(npx )?climatecheck(-train)? /.test(line)) commands.push({ page, line, lang });
      }
    }
    for (const m of text
      .replace(/^```[\s\S]*?^```/gm, "")
      .matchAll(/`((?:npx )?climatecheck(?:-train)? [^`]+)`/g))
      commands.push({ page, line: m[1], lang: "inline" });
  }
  return { commands, blocks };
}

/** Shell-like words: quoted strings kept whole. */
const words = (line: string): string[] =>
  [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);

const SUBCOMMANDS = new Set(["queue", "data", "models"]);
// As src/cli/main.ts builds it: the same commands, and the program's own --version.
const program = new Command().name("climatecheck").version("0", "-V, --version", "print the version");
registerCommands(program);
/** The options `climatecheck PATH --help` lists: the command's help text, as the CLI prints it. */
function optionsOf(path: string[]): Set<string> {
  let c: Command | undefined = program;
  for (const name of path.filter((p) => !p.startsWith("-")))
    c = c?.commands.find((x) => x.name() === name || x.aliases().includes(name));
  assert.ok(c, `climatecheck ${path.join(" ")}: no such command`);
  return new Set([...c.helpInformation().matchAll(/--[a-z][a-z0-9-]*/g)].map((m) => m[0]));
}

/** The options `climatecheck-train --help` lists. */
const trainOptions = new Set(
  [
    ...trainProgram()
      .helpInformation()
      .matchAll(/--[a-z][a-z0-9-]*/g),
  ].map((m) => m[0]),
);
const isTrain = (line: string) => /^(npx )?climatecheck-train /.test(line);

const PLACEHOLDER = /\b[A-Z]{2,}\b|\[|\||\.\.\./;

const { commands, blocks } = examples();

test("the pages hold command examples to check", () => {
  assert.ok(commands.length >= 25, String(commands.length));
  for (const page of ["README.md", "docs/cli.md", "docs/evaluate.md", "docs/queue.md", "docs/api.md"])
    assert.ok(readFileSync(page, "utf8").length > 0, page);
});

test("every example names a command that exists and only options that command has", () => {
  for (const e of commands) {
    const w = words(e.line.replace(/^npx /, "")).slice(1);
    if (isTrain(e.line)) {
      for (const o of e.line.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g))
        assert.ok(trainOptions.has(o[0]), `${e.page}: \`${e.line}\`: climatecheck-train has no ${o[0]}`);
      continue;
    }
    if (w[0] === "--version" || w[0] === "COMMAND") continue;
    const path = SUBCOMMANDS.has(w[0]) && w[1] && !w[1].startsWith("-") ? w.slice(0, 2) : w.slice(0, 1);
    const options = optionsOf(path);
    for (const o of e.line.matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g))
      assert.ok(options.has(o[0]), `${e.page}: \`${e.line}\`: climatecheck ${path.join(" ")} has no ${o[0]}`);
  }
});

test("the examples that run here do run: evaluate on examples/, check, --version", () => {
  let ran = 0;
  const ranLines: string[] = [];
  for (const e of commands) {
    const w = words(e.line.replace(/^npx /, "")).slice(1);
    // Training runs for minutes on ../shared/data: its examples are checked against its --help above.
    if (isTrain(e.line) || PLACEHOLDER.test(e.line.replace(/"[^"]*"/g, ""))) continue;
    let args: string[];
    if (w[0] === "--version") args = w;
    else if (w[0] === "evaluate" && w.includes("examples/labels.csv"))
      args = w.map((x) => (x.endsWith(".html") ? join(dir, "report.html") : x));
    // A claim to check (`climatecheck check --json` in a sentence names the option, it is no example).
    else if (w[0] === "check" && w.slice(1).some((x) => !x.startsWith("-")))
      args = [...w, "--index", index, "--fast"];
    else continue;
    const r = cli(args);
    assert.equal(r.status, 0, `${e.page}: \`${e.line}\`: ${r.stderr}`);
    if (w[0] === "check") assert.match(r.stdout, /\nSummary: /);
    if (args.includes("--html")) assert.match(readFileSync(join(dir, "report.html"), "utf8"), /<svg/);
    ran++;
    ranLines.push(`${e.page}: ${e.line}`);
  }
  // README's check and evaluate, docs/evaluate.md's evaluate with --html, and the version at least.
  assert.ok(ran >= 4, ranLines.join("\n"));
  assert.ok(
    ranLines.some((l) => l.startsWith("README.md: npx climatecheck check")),
    ranLines.join("\n"),
  );
});

test("the usage error shown in docs/cli.md is what the CLI prints", () => {
  const block = blocks.find((b) => b.lang === "text" && b.line.startsWith("climatecheck check: --k"));
  assert.ok(block, "docs/cli.md shows a usage error");
  const r = cli(["check", "--k", "51", "a claim"]);
  assert.equal(r.status, 2);
  assert.equal(r.stderr, block.line);
});

test("the JSON profiles and configs shown are read by the config readers", async () => {
  const json = blocks.filter((b) => b.lang === "json");
  assert.ok(json.length >= 2);
  for (const [i, b] of json.entries()) {
    const file = join(dir, `config-${i}.json`);
    writeFileSync(file, b.line);
    // A profile naming hub models is read, then stops at the first model not pulled, naming the pull command.
    if (b.line.includes('"repo"')) {
      await assert.rejects(
        resolveVerifierConfig({ config: file }),
        /model not pulled: .*climatecheck models pull/,
      );
      continue;
    }
    // Each reader takes its own section (a plain verifier config is read as the verification section).
    await readRetrievalConfig(file);
    await readNarrativesConfig(file);
    await resolveVerifierConfig({ config: file });
  }
});
