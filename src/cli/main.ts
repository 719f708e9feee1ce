#!/usr/bin/env node
/** The `climatecheck` command. Each subcommand lives in its own module under src/cli/commands. */
import { Command } from "commander";
import { DataError } from "../data/errors.ts";
import { registerCommands } from "./commands/index.ts";

const program = new Command()
  .name("climatecheck")
  .description("Check climate-related claims against the scientific literature (ClimateCheck 2026).")
  .showHelpAfterError()
  // Usage errors exit 2, like bad input files.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

registerCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof DataError) {
    process.stderr.write(`climatecheck: ${e.message}\n`);
    process.exit(2);
  }
  throw e;
}
