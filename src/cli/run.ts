/**
 * Runs a commander program the way every ClimateCheck command runs: a usage error is one line naming the command,
 * then that command's usage, exit 2; bad data exit 2, a full disk or an unusable service one line and exit 1
 * (docs/exit-codes.md). Used by `climatecheck` and `climatecheck-train`.
 */
import type { Command } from "commander";
import { DataError, ServiceError } from "../data/errors.ts";

/** Every command, subcommands of subcommands too. */
const walk = (c: Command): Command[] => [c, ...c.commands.flatMap(walk)];

export async function runProgram(program: Command, argv: readonly string[] = process.argv): Promise<void> {
  const name = program.name();
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
    await program.parseAsync(argv as string[]);
  } catch (e) {
    if (e instanceof DataError) {
      process.stderr.write(`${name}: ${e.message}\n`);
      process.exit(2);
    }
    // A full disk (or quota, or file size limit): one line; every writer keeps its last complete file or commit.
    const code = (e as NodeJS.ErrnoException)?.code;
    if (code === "ENOSPC" || code === "EDQUOT" || code === "EFBIG") {
      const path = (e as NodeJS.ErrnoException).path;
      process.stderr.write(
        `${name}: no space left to write${path ? ` ${path}` : ""} (${code}); nothing complete was overwritten: free space and run the same command again (ingest and predict resume)\n`,
      );
      process.exit(1);
    }
    // A service that never gave a usable answer (a chat endpoint, the hub, Redis): its stage, URL and reasons,
    // without a stack trace; exit 1 (docs/exit-codes.md).
    if (e instanceof ServiceError) {
      process.stderr.write(`${name}: ${e.message}\n`);
      process.exit(1);
    }
    throw e;
  }
}
