// Limits on the parameters of an HTTP request as the router sees them: part of core/limits.ts
// (which re-exports this file). Each is declared in the OpenAPI document where it applies
// (docs/rest-and-sql.md, "Limits a request's parameters meet").

/**
 * Longest path parameter, in characters as JSON Schema's maxLength counts them (Unicode code
 * points): longer is 414. Every path parameter of the OpenAPI document declares it as maxLength.
 */
export const HTTP_MAX_PATH_PARAM_CHARS = 100;
/**
 * The router's own bound on a path parameter, in UTF-16 code units (how JavaScript strings count):
 * a code point takes at most two, so no parameter within HTTP_MAX_PATH_PARAM_CHARS is refused by
 * the router; one past that is refused by code points (api/access/http-protocol.ts).
 */
export const HTTP_MAX_PATH_PARAM_UTF16_UNITS = 2 * HTTP_MAX_PATH_PARAM_CHARS;
