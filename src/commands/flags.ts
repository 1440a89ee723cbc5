import { z } from "zod";
import { ConfigError, type Config } from "../config.ts";
import { readable } from "../emulator/http/validation.ts";

/**
 * A command's flags are read by a zod object keyed by the flags' own names
 * ("--port"), so that each problem names the flag the user typed; a flag that
 * overrides a setting is read by that setting's rule (configSchema.shape).
 * Problems stop the command like invalid configuration: one line each, exit 2.
 */

/**
 * A flag's rule: not blank, then `rule`. A blank variable counts as unset
 * (loadConfig), but a flag given blank was typed that way: it is named blank,
 * not read by the setting's rule.
 */
export function flag<Output>(rule: z.ZodType<Output>): z.ZodType<Output, string> {
  // A setting's rule reads the variable's text; pipe's types ask for a rule declared on strings.
  return z.string().trim().min(1, "must not be blank").pipe(rule as z.ZodType<Output, string>);
}

/** `--campaign <uid>` of sync and verify: a blank one would otherwise read as no flag, and run on the whole account. */
export const campaignFlag = flag(z.string()).optional();

/** What commander hands over for each flag, before it is read. */
type GivenFlags<Schema extends z.ZodObject> = Record<keyof z.input<Schema>, string | boolean | undefined>;

function flagProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
}

/**
 * The flags read by `schema` and the configuration `loadConfig` reads, or one
 * ConfigError with the problems of both: a user fixes them all in one go.
 */
export function readFlagsAndConfig<Schema extends z.ZodObject>(
  schema: Schema,
  given: GivenFlags<Schema>,
  loadConfig: () => Config,
): { flags: z.output<Schema>; config: Config } {
  const parsed = schema.safeParse(given, { error: readable });
  const problems = parsed.success ? [] : flagProblems(parsed.error);
  try {
    const config = loadConfig();
    if (parsed.success) return { flags: parsed.data, config };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  throw new ConfigError(problems);
}

/**
 * The environment without the variables that given flags override (`overrides`: variable to the flag's value,
 * undefined when the flag was not given): the flag is read in the variable's place, and a problem of the
 * variable is none when the flag replaces it.
 */
export function withoutOverridden(env: NodeJS.ProcessEnv, overrides: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const replaced = Object.keys(overrides).filter((variable) => overrides[variable] !== undefined);
  return { ...env, ...Object.fromEntries(replaced.map((variable) => [variable, undefined])) };
}
