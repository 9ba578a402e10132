// Table names that other layers must agree on. The published tables are the client-facing
// part of the schema: what client SQL may read and what client-facing storage figures
// describe. Every other table (lookups, the registry, keys, usage, dead letters, the
// journal) is internal and never named to a client.
export const PUBLISHED_TABLES: readonly string[] = Object.freeze(['transactions', 'protocol_hourly', 'instruction_hourly']);
