// What a finished job writes beside its data files: manifest.json (machine-readable: files
// with rows, bytes and sha256, the schema, filters, seeds, strata, fitted transforms and the
// data watermark, times in ISO 8601 UTC) and README.md, a dataset card whose YAML header lets
// common loaders (Hugging Face `datasets`, which reads `configs[].data_files` and
// `dataset_info.features`) find the splits as named files and their columns' types.
import { FORMAT_FILES, SPLIT_NAMES, type ExportSpec } from './export-config.ts';
import type { FittedPreprocessing } from './preprocessing.ts';
import { maxShareDeviation, type StrataPlan } from './stratified-sampling.ts';
import type { JobRecord } from './job-store.ts';
import { fileSchema } from './execution-rows.ts';

export const MANIFEST = 'manifest.json';
export const DATASET_CARD = 'README.md';

/** Loader names of the splits: `validation` is the name loaders expect for `val`. */
const LOADER_SPLIT = { train: 'train', test: 'test', val: 'validation' } as const;

/** How rows were assigned to splits and samples, in words a reader can recompute. */
const HASHING =
  'split: h = cityHash64(signature, toUInt64(seed)) % 2^32; train if h < round(train * 2^32), test if h < round((train + test) * 2^32), else val. ' +
  'sampling RANDOM: kept if cityHash64(signature, toUInt64(sampling.seed)) % 2^32 < round(rate * 2^32). ' +
  'sampling STRATIFIED: in each stratum of n rows, the k = floor(rate * n + 0.5) rows of smallest cityHash64(signature, toUInt64(sampling.seed)) % 2^32 are kept, ' +
  'with the other rows of the stratum that share the k-th hash (the same transaction).';

const STRATA_RULE =
  'each stratum keeps floor(rate * rows + 0.5) rows, more only by the other instructions of the one transaction at its threshold; ' +
  "so a stratum's share of the sample differs from its share of the filtered rows by at most maxShareDeviation (measured, below)";

/** How a CSV file holds text (export-writer.ts, csvEscaped): one record a line, for any reader's defaults. */
const CSV_TEXT_RULE =
  'every text value on one line: a backslash written as \\\\, a line feed as \\n, a carriage return as \\r (two characters each); ' +
  'decode with one pass over the value, left to right';

/** The card's CSV section: the rule, and a decoder test/support/read-exports.py runs as written. */
const CSV_TEXT = [
  '## Text in CSV',
  '',
  'Every text value is written on one line, so any CSV reader with its defaults reads one record a line ' +
    '(pyarrow, for one, cuts a file into blocks at line ends before it reads quotes): a backslash is written as `\\\\`, a line feed as `\\n`, ' +
    'a carriage return as `\\r` (two characters each). Multi-line `log_messages` read as one line with `\\n` between its lines. ' +
    'Arrays (`accounts`), maps and tuples are JSON (`["a","b"]`), written by the same rule. To get the values back, decode each text cell:',
  '',
  '```python',
  'import re',
  '',
  '',
  'def unescape(s):',
  String.raw`    return re.sub(r"\\([\\nr])", lambda m: {"n": "\n", "r": "\r", "\\": "\\"}[m.group(1)], s)`,
  '```',
  '',
  'For example `df["log_messages"] = df["log_messages"].fillna("").map(unescape)` in pandas. Parquet and JSONL hold text as it is.',
  '',
];

/** The engine's `2026-11-02 10:00:00.123` (UTC) as ISO 8601: `2026-11-02T10:00:00.123Z`. */
export const isoUtc = (engineTime: string): string => `${engineTime.trim().replace(' ', 'T')}Z`;

function configOf(spec: ExportSpec): Record<string, unknown> {
  const common = { format: spec.format, sampling: spec.sampling, splits: spec.splits, seed: spec.seed };
  return spec.kind === 'filters'
    ? { kind: 'filters', ...common, filters: spec.filters, columns: spec.columns, preprocessing: spec.preprocessing ?? null }
    : { kind: 'sql', ...common, query: spec.query };
}

function strataOf(strata: StrataPlan | undefined): Record<string, unknown> | null {
  if (strata === undefined) return null;
  return {
    column: strata.column,
    rule: STRATA_RULE,
    maxShareDeviation: maxShareDeviation(strata),
    strata: strata.values.map((value, i) => ({ value, rows: strata.rows[i], kept: strata.kept[i] })),
  };
}

export function manifestOf(job: JobRecord): Record<string, unknown> {
  const perSplit = Object.fromEntries(SPLIT_NAMES.map((s) => [s, job.files.filter((f) => f.split === s).reduce((a, f) => a + f.rows, 0)]));
  return {
    id: job.id,
    createdAt: job.createdAt,
    completedAt: job.finishedAt,
    config: configOf(job.spec),
    hashing: HASHING,
    schema: fileSchema(job),
    ...(job.spec.format === 'CSV' ? { csvText: CSV_TEXT_RULE } : {}),
    watermark:
      job.work === null
        ? null
        : {
            ingestedAt: isoUtc(job.work.ingestedAt),
            maxBlockTime: job.work.maxBlockTime === null ? null : new Date(job.work.maxBlockTime * 1000).toISOString().replace('.000Z', 'Z'),
          },
    sampling: strataOf(job.work?.strata),
    preprocessing: job.work?.fitted ?? null,
    rows: job.files.reduce((a, f) => a + f.rows, 0),
    bytes: job.files.reduce((a, f) => a + f.bytes, 0),
    rowsPerSplit: perSplit,
    files: job.files,
  };
}

/** The `datasets` feature of an engine type, or undefined when it has none this card can name. */
function featureOf(type: string): string[] | undefined {
  const t = type
    .replace(/^LowCardinality\((.*)\)$/, '$1')
    .replace(/^Nullable\((.*)\)$/, '$1')
    .replace(/^LowCardinality\((.*)\)$/, '$1');
  const scalar = (d: string): string[] => [`    dtype: ${d}`];
  if (t === 'String' || /^FixedString\(\d+\)$/.test(t)) return scalar('string');
  if (/^U?Int(8|16|32|64)$/.test(t)) return scalar(t.toLowerCase());
  if (t === 'Float32' || t === 'Float64') return scalar(t.toLowerCase());
  if (t === 'Bool') return scalar('bool');
  if (t === 'Date' || t === 'Date32') return scalar('date32');
  if (/^DateTime(\('UTC'\))?$/.test(t)) return scalar('timestamp[s, tz=UTC]');
  const ms = /^DateTime64\(3(, 'UTC')?\)$/.exec(t);
  if (ms) return scalar('timestamp[ms, tz=UTC]');
  if (t === 'Array(String)') return ['    list: string'];
  return undefined;
}

/** `dataset_info.features` of the files' columns; none when a column's type has no name here (loaders then infer). */
function featuresYaml(schema: JobRecord['schema']): string[] {
  if (schema === null || schema.length === 0) return [];
  const lines = ['dataset_info:', '  features:'];
  for (const c of schema) {
    const f = featureOf(c.type);
    if (f === undefined || !/^[A-Za-z0-9_]+$/.test(c.name)) return [];
    lines.push(`  - name: ${c.name}`, ...f);
  }
  return lines;
}

function preprocessingText(fitted: FittedPreprocessing | undefined): string[] {
  if (fitted === undefined) return [];
  const f = (x: number | null): string => (x === null ? '(no rows)' : String(x));
  const rows = (n: number): string => `fitted on ${fitted.fittedOn === 'train' ? 'the train split' : 'every row'} (${n} rows)`;
  return [
    '## Preprocessing',
    '',
    'Applied by the engine while writing; serve a model with the same transform and these parameters (also in manifest.json).',
    '',
    ...fitted.normalize.map((n) =>
      fitted.method === 'Z_SCORE'
        ? `- \`${n.column}\`: z-score, (x - mean) / std with mean = ${f(n.mean)}, std = ${f(n.std)} (population standard deviation), ${rows(n.rows)}; Float64; 0 when std is 0.`
        : `- \`${n.column}\`: min-max, (x - min) / (max - min) with min = ${f(n.min)}, max = ${f(n.max)}, ${rows(n.rows)}; Float64; 0 when max = min; rows outside the fitted range fall outside [0, 1].`,
    ),
    ...fitted.oneHot.map(
      (o) =>
        `- \`${o.column}\`: one-hot, one UInt8 column per value (1 when the row has it): ${o.categories.map((v, i) => `\`${o.names[i]}\` = ${JSON.stringify(v)}`).join(', ') || '(no rows: written as stored)'}.`,
    ),
    '',
  ];
}

function strataText(strata: StrataPlan | undefined): string[] {
  if (strata === undefined) return [];
  return [
    `## Stratified sample by ${strata.column}`,
    '',
    `Rule: ${STRATA_RULE}. maxShareDeviation = ${maxShareDeviation(strata)}.`,
    '',
    '| stratum | rows | kept |',
    '|---|---|---|',
    ...strata.values.map((v, i) => `| ${v.replace(/[|\n\r]/g, ' ')} | ${strata.rows[i]} | ${strata.kept[i]} |`),
    '',
  ];
}

export function datasetCard(job: JobRecord): string {
  const ext = FORMAT_FILES[job.spec.format].ext;
  const splits = SPLIT_NAMES.filter((s) => job.files.some((f) => f.split === s));
  const rows = (s: string): number => job.files.filter((f) => f.split === s).reduce((a, f) => a + f.rows, 0);
  const total = job.files.reduce((a, f) => a + f.rows, 0);
  // Never an empty `data_files:` (loaders failed on it with a TypeError): every split asked for has a file.
  const yaml = [
    '---',
    ...(splits.length === 0
      ? []
      : ['configs:', '- config_name: default', '  data_files:', ...splits.flatMap((s) => [`  - split: ${LOADER_SPLIT[s]}`, `    path: "${s}-*.${ext}"`])]),
    ...featuresYaml(fileSchema(job)),
    '---',
  ];
  const spec = job.spec;
  const source =
    spec.kind === 'filters'
      ? `transactions filtered by protocols ${spec.filters.protocols?.join(', ') ?? '(all available)'} and dates ${spec.filters.dateRange?.start ?? '(any)'} to ${spec.filters.dateRange?.end ?? '(any)'}`
      : `the SQL query:\n\n\`\`\`sql\n${spec.query}\n\`\`\``;
  const sampling =
    spec.sampling === null
      ? ''
      : `; sampled ${spec.sampling.strategy}${spec.sampling.stratifyBy ? ` by ${spec.sampling.stratifyBy}` : ''} at rate ${spec.sampling.rate} with seed ${spec.sampling.seed}`;
  return [
    ...yaml,
    '',
    `# Solana DeFi instructions export ${job.id}`,
    '',
    `Rows of ${source}`,
    '',
    `Created ${job.createdAt}; data up to records ingested at ${job.work === null ? '(see manifest)' : isoUtc(job.work.ingestedAt)}. Times in the files are UTC (CSV and JSONL: ISO 8601 with Z).`,
    '',
    ...(total === 0
      ? [
          'This export has no rows. Its files are empty and carry the columns (CSV: the header; Parquet: the schema). ' +
            '`datasets` cannot build a split of 0 rows in memory; read it with `load_dataset(path, streaming=True)`, or with pyarrow.',
          '',
        ]
      : []),
    '| split | rows | files |',
    '|---|---|---|',
    ...splits.map(
      (s) =>
        `| ${s} | ${rows(s)} | ${job.files
          .filter((f) => f.split === s)
          .map((f) => f.name)
          .join(', ')} |`,
    ),
    '',
    `Format ${spec.format}; split seed ${spec.seed}${sampling}. ` +
      'A transaction (signature) is always in exactly one split; the same configuration over the same data gives the same files.',
    '',
    `Splits and samples: ${HASHING}`,
    '',
    ...strataText(job.work?.strata),
    ...preprocessingText(job.work?.fitted),
    '## Columns',
    '',
    '| column | type |',
    '|---|---|',
    ...(fileSchema(job) ?? []).map((c) => `| ${c.name} | ${c.type} |`),
    '',
    ...(spec.format === 'CSV' ? CSV_TEXT : []),
    `Checksums (sha256) and sizes of every file are in ${MANIFEST}.`,
    '',
  ].join('\n');
}
