import type { Command } from "commander";
import { loadConfig } from "../config.ts";

interface SqlFlags {
  json?: boolean;
}

export function register(program: Command): void {
  program
    .command("sql")
    .description("run one read-only query on the warehouse (embedded or DATABASE_URL, its schema first on the search path) and print the rows")
    .argument("[query]", "the query; read from standard input when omitted")
    .option("--json", "print one JSON object per row instead of a table")
    .action(async (query: string | undefined, flags: SqlFlags) => {
      const config = loadConfig(process.env);
      // Loaded only when the command runs: `sql --help` needs no database driver.
      const { runQuery } = await import("./sql-query.ts");
      await runQuery(config, query ?? (await readStandardInput()), { json: flags.json === true });
    });
}

/**
 * The command line with a query that opens with an SQL comment (`-- …`, as the README's examples do) moved after
 * `--`, where it is an argument: commander would take it for an unknown option. An argument that begins with `-` and holds whitespace
 * cannot name an option.
 */
export function withQueryArguments(argv: readonly string[]): string[] {
  if (argv[2] !== "sql") return [...argv];
  const query = argv.findIndex((arg, index) => index > 2 && /^-.*\s/s.test(arg));
  if (query < 0 || argv.slice(3, query).includes("--")) return [...argv];
  // A `--` given after it would become the query.
  return [...argv.slice(0, query), ...argv.slice(query + 1).filter((arg) => arg !== "--"), "--", argv[query] as string];
}

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
