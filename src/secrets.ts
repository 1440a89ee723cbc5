import type { Config } from "./config.ts";

/**
 * What no log line may print: the API key, the passwords in DATABASE_URL and REDIS_URL (a client's error can
 * carry one: ioredis attaches a refused AUTH with its password), and the token of the HTTP endpoints (a request
 * logged with its headers would carry it).
 */
export function secretsOf(config: Config): (string | undefined)[] {
  return [config.api.key, ...passwordsIn(config.warehouse.databaseUrl), ...passwordsIn(config.redis.url), config.http.token];
}

/**
 * A URL's passwords as written and as its client reads them (decoded): the one in its user information and a
 * `password` query parameter, which pg and ioredis both read into their options. Read without a URL parser, so
 * that a URL one refuses (and whose error may quote it) still has its passwords found.
 */
function passwordsIn(url: string | undefined): string[] {
  if (url === undefined) return [];
  const userinfo = /^[a-z][a-z\d+.-]*:\/\/([^/?#]*)@/i.exec(url)?.[1];
  const colon = userinfo?.indexOf(":") ?? -1;
  const inUserinfo = userinfo === undefined || colon === -1 ? [] : [userinfo.slice(colon + 1)];
  const inQuery = [...url.matchAll(/[?&]password=([^&#]*)/gi)].map((match) => match[1] as string);
  return [...inUserinfo, ...inQuery].flatMap((written) => [written, ...decodedForms(written)]);
}

/** How a client may decode a written password: percent-decoded, and as a query value also with `+` for a space. */
function decodedForms(written: string): string[] {
  try {
    return [decodeURIComponent(written), decodeURIComponent(written.replaceAll("+", " "))];
  } catch {
    // A stray % that decodes to nothing: the client cannot read it either, so only the written form can turn up.
    return [];
  }
}
