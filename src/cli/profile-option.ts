/** `--profile NAME|FILE`: a shipped profile by name (profiles/NAME.json) or a file; it becomes the `--config`. */
import type { Command } from "commander";
import { profileFile, shippedProfiles } from "../models/profile.ts";

export function addProfileOption(command: Command): Command {
  return command
    .option(
      "--profile <name|file>",
      `a shipped profile (${shippedProfiles().join(", ")}) or a profile file; its hub models are read from the local cache (climatecheck models pull NAME)`,
    )
    .hook("preAction", (cmd) => {
      const o = cmd.opts() as { profile?: string; config?: string };
      if (o.profile === undefined) return;
      if (o.config !== undefined) cmd.error("give --profile or --config, not both");
      cmd.setOptionValue("config", profileFile(o.profile));
    });
}
