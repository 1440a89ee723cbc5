import type { Command } from "commander";
import { z } from "zod";
import { loadConfig } from "../config.ts";
import type { VerifyOptions } from "../sync/verify.ts";
import { campaignFlag, readFlagsAndConfig } from "./flags.ts";

interface VerifyFlags {
  campaign?: string;
  deep?: true | string;
  values?: boolean;
  json?: boolean;
}

/** `--deep` alone (commander gives true) or `--deep=mismatched`: the campaigns whose counts disagree; `--deep=all`: every campaign. */
const verifyFlags = z.object({
  "--campaign": campaignFlag,
  "--deep": z
    .union([z.literal(true).transform(() => "mismatched" as const), z.literal("mismatched"), z.literal("all")], {
      error: "must be given alone (campaigns whose counts disagree) or as --deep=all",
    })
    .optional(),
});

export function register(program: Command): void {
  program
    .command("verify")
    .description("reconcile the warehouse with the upstream: key sets of the account's listings, counts per campaign and stream; exit 1 unless all is ok")
    .option("--campaign <uid>", "check one campaign only")
    .option("--deep [which]", "compare key sets of leads and events too: for campaigns whose counts disagree, or --deep=all")
    .option(
      "--values",
      "compare the values of the rows held with the records read (listings, replies, the key sets walked) and each campaign's detail (one request more per campaign)",
    )
    .option("--json", "print the result as JSON (identifiers in full)")
    .action(async (flags: VerifyFlags) => {
      const { flags: read, config } = readFlagsAndConfig(verifyFlags, { "--campaign": flags.campaign, "--deep": flags.deep }, () => loadConfig(process.env, ["apiKey"]));
      const deep = read["--deep"];
      const campaignUid = read["--campaign"];
      // Loaded only when the command runs: `verify --help` needs neither the database driver nor the HTTP client.
      const { runVerify } = await import("./verify-report.ts");
      const options: VerifyOptions = { ...(campaignUid === undefined ? {} : { campaignUid }), ...(deep ? { deep } : {}), ...(flags.values ? { values: true } : {}) };
      await runVerify(config, options, flags.json === true);
    });
}
