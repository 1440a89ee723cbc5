import { inspect } from "node:util";
import { Command, CommanderError } from "commander";
import { ConfigError } from "./config.ts";
import * as demo from "./commands/demo.ts";
import * as emulator from "./commands/emulator.ts";
import * as migrate from "./commands/migrate.ts";
import * as prune from "./commands/prune.ts";
import * as sqlCommand from "./commands/sql.ts";
import * as status from "./commands/status.ts";
import * as sync from "./commands/sync.ts";
import * as verify from "./commands/verify.ts";
import * as worker from "./commands/worker.ts";
import { boundHeapGrowth } from "./heap.ts";
import packageJson from "../package.json" with { type: "json" };

/**
 * The `coldsync` command line (contract C). Each command lives in its own
 * module under src/commands/ and registers itself on the program.
 */

boundHeapGrowth();

const program = new Command()
  .name("coldsync")
  .description("Keeps a PostgreSQL warehouse in step with a cold-email campaign service's API.")
  .version(packageJson.version)
  // Commands made by program.command() take these settings (commander copies them to each).
  .configureOutput({ outputError: () => {} })
  .exitOverride((error) => {
    // Help and version exit as commander has them; every other parse error (an unknown option or command, a missing
    // or extra argument) is a configuration problem: one line, exit 2, as an invalid flag value is.
    if (error.exitCode === 0 || error.code === "commander.help") throw error;
    // commander puts its suggestion ("(Did you mean --seed?)") on a line of its own.
    throw new ConfigError([error.message.replace(/^error: /, "").replace(/\s*\n\s*/g, " ")]);
  });

// Each command loads its implementation only when it runs, so registering all of them costs little.
for (const command of [demo, migrate, sync, status, verify, sqlCommand, worker, prune, emulator]) command.register(program);

try {
  await program.parseAsync(sqlCommand.withQueryArguments(process.argv));
} catch (error) {
  if (error instanceof CommanderError) process.exit(error.exitCode);
  if (error instanceof ConfigError) {
    for (const problem of error.problems) console.error(`coldsync: ${problem}`);
    process.exit(2);
  }
  // Not every rejection is an Error (PGlite rejects with plain objects): one line either way.
  console.error(`coldsync: ${error instanceof Error ? error.message : inspect(error, { breakLength: Infinity, depth: 2 })}`);
  process.exit(1);
}
