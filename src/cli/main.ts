#!/usr/bin/env node
/** The `climatecheck` command. Each subcommand lives in its own module under src/cli/commands. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { DataError, ServiceError } from "../data/errors.ts";
import { PACKAGE_ROOT } from "../data/paths.ts";
import { registerCommands } from "./commands/index.ts";

const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
  version: string;
};

const program = new Command()
  .name("climatecheck")
  .description("Check climate-related claims against the scientific literature (ClimateCheck 2026).")
  .version(version, "-V, --version", "print the version");

registerCommands(program);

/** Every command, subcommands of subcommands too. */
const walk = (c: Command): Command[] => [c, ...c.commands.flatMap(walk)];

// A usage error is one line naming the command, then that command's usage (not the whole help); exit 2.
for (const c of walk(program)) {
  const names: string[] = [];
  for (let at: Command | null = c; at; at = at.parent) names.unshift(at.name());
  const path = names.join(" ");
  c.configureOutput({
    outputError: (text, write) => write(`${path}: ${text.replace(/^error: /, "")}`),
  })
    .showHelpAfterError(`Usage: ${path} ${c.usage()}\nRun "${path} --help" for the options.`)
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));
}

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof DataError) {
    process.stderr.write(`climatecheck: ${e.message}\n`);
    process.exit(2);
  }
  // A full disk (or quota, or file size limit): one line; every writer keeps its last complete file or commit.
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === "ENOSPC" || code === "EDQUOT" || code === "EFBIG") {
    const path = (e as NodeJS.ErrnoException).path;
    process.stderr.write(
      `climatecheck: no space left to write${path ? ` ${path}` : ""} (${code}); nothing complete was overwritten: free space and run the same command again (ingest and predict resume)\n`,
    );
    process.exit(1);
  }
  // A service that never gave a usable answer (a chat endpoint, the hub, Redis): its stage, URL and reasons,
  // without a stack trace; exit 1 (docs/exit-codes.md).
  if (e instanceof ServiceError) {
    process.stderr.write(`climatecheck: ${e.message}\n`);
    process.exit(1);
  }
  throw e;
}
