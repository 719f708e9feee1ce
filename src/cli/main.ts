#!/usr/bin/env node
/** The `climatecheck` command. Each subcommand lives in its own module under src/cli/commands. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { PACKAGE_ROOT } from "../data/paths.ts";
import { registerCommands } from "./commands/index.ts";
import { runProgram } from "./run.ts";

const { version } = JSON.parse(readFileSync(join(PACKAGE_ROOT, "package.json"), "utf8")) as {
  version: string;
};

const program = new Command()
  .name("climatecheck")
  .description("Check climate-related claims against the scientific literature (ClimateCheck 2026).")
  .version(version, "-V, --version", "print the version");

registerCommands(program);
await runProgram(program);
