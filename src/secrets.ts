import type { Config } from "./config.ts";

/**
 * What no log line may print: the API key, and the passwords in DATABASE_URL and REDIS_URL (a client's error can
 * carry one: ioredis attaches a refused AUTH with its password).
 */
export function secretsOf(config: Config): (string | undefined)[] {
  return [config.api.key, ...passwordsIn(config.warehouse.databaseUrl), ...passwordsIn(config.redis.url)];
}

/**
 * A URL's password as written and as its client reads it (percent-decoded). Read without a URL parser, so
 * that a URL one refuses (and whose error may quote it) still has its password found.
 */
function passwordsIn(url: string | undefined): string[] {
  const userinfo = url === undefined ? undefined : /^[a-z][a-z\d+.-]*:\/\/([^/?#]*)@/i.exec(url)?.[1];
  const colon = userinfo?.indexOf(":") ?? -1;
  if (userinfo === undefined || colon === -1) return [];
  const written = userinfo.slice(colon + 1);
  try {
    return [written, decodeURIComponent(written)];
  } catch {
    // A stray % that decodes to nothing: the client cannot read it either, so only the written form can turn up.
    return [written];
  }
}
