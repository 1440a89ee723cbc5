import type pg from "pg";

/**
 * Statements the sync runs on every page (the upserts, one per table and
 * shape) go to PostgreSQL as named prepared statements: each connection
 * parses and plans one once, then only binds each page's parameters. Sent
 * unnamed, every execution was parsed and planned again, about 0.2 ms of the
 * server's CPU each, and its text sent again: 8 % of the `large` backfill's
 * wall on a machine whose cores the sync, the upstream and PostgreSQL share.
 *
 * Only texts registered here are named, so a connection holds as many
 * prepared statements as there are upsert shapes, a few per table, and
 * NAMED_PER_GROUP per table and source at most. Named
 * statements live in a session; the warehouse already needs sessions of its
 * own (its run locks are session advisory locks), so a pooler in front of
 * PostgreSQL must run in session mode either way.
 */

const names = new Map<string, string>();

/**
 * Statement texts named at most per group (an upsert's table and source). A sync meets a few per group (16 texts in
 * all in a full sync of a clean upstream, 31 under mild drift): a field that cannot be read is left out of its row,
 * so each set of such fields is a shape of its own, and a flaky upstream makes new sets for months. Past this many
 * in its group, a text goes unnamed, parsed each time it is sent, so that neither this process nor any PostgreSQL
 * session holds one statement per combination.
 */
export const NAMED_PER_GROUP = 8;

const namedInGroup = new Map<string, number>();

/**
 * Registers a statement's text: from now on every connection prepares it once and reuses it, unless its `group`
 * already has NAMED_PER_GROUP texts named.
 */
export function prepareOnce(text: string, group = ""): void {
  if (names.has(text)) return;
  const named = namedInGroup.get(group) ?? 0;
  if (named >= NAMED_PER_GROUP) return;
  namedInGroup.set(group, named + 1);
  names.set(text, `coldsync_${names.size + 1}`);
}

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** Makes `client` send registered texts as named statements; every other query goes as it came. */
export function namePreparedStatements(client: pg.ClientBase): void {
  const query = client.query.bind(client) as Query;
  const named: Query = (config, values, callback) => {
    const name = typeof config === "string" ? names.get(config) : undefined;
    return name === undefined ? query(config, values, callback) : query({ name, text: config, values }, callback);
  };
  client.query = named as typeof client.query;
}
