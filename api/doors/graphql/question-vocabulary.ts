// The vocabulary of open questions, where the caller picks what to group by, which metrics
// and how to sort (transactions(groupBy, metrics, sort), timeSeries, failedTransactions,
// queryComplexity): derived from a catalog of the question model's measures (the model's
// by default, a test's with more), so a measure declared as a metric in the model shows as
// an enum value, a node field and a sort field with no edit here or in a door.
import { openQuestions, type OpenQuestions, type OpenWords } from '../../catalog/open-questions.ts';
import { FAILURE_METRICS, type Metric } from '../../analytics/presets/group-pages.ts';
import { isDerived, isTimeDimension, MEASURES, type Dimension, type Measures } from '../../analytics/question/model.ts';
import type { ListingSort, RangeFilter } from '../../analytics/types.ts';

/** One metric: its enum value, the measure it reads, the node field that carries it. */
export interface MetricWord {
  value: string;
  measure: string;
  /** The node field carrying it: the measure's name, or the name the metric is renamed to. */
  field: string;
  description: string;
  percentile: boolean;
  /** Why the name is deprecated (an older name of a metric renamed): it still answers. */
  deprecated?: string;
}

/** The dimensions clients may group by. */
export type GroupKey = Exclude<Dimension, 'errorMessage'>;

/** One group key: its enum value, dimension, and the node field (and type) that carries it. */
export interface GroupKeyWord {
  value: string;
  dimension: GroupKey;
  field: string;
  /** The field's type on a group node; undefined when a record's field of that name carries it. */
  type: 'String' | 'Float' | 'Int' | undefined;
  description: string;
  /** The key as the node shows it, from the model's value (Unix seconds for time keys). */
  show(v: string | number): string | number;
}

const day = (t: string | number): string => new Date(Number(t) * 1000).toISOString().slice(0, 10);

export const GROUP_KEYS: readonly GroupKeyWord[] = [
  {
    value: 'PROTOCOL',
    dimension: 'protocol',
    field: 'protocol',
    type: 'String',
    description: "By protocol (the node's protocol and protocolName)",
    show: String,
  },
  {
    value: 'HOUR',
    dimension: 'time',
    field: 'hour',
    type: 'Float',
    description: "By hour: the start of the hour, Unix seconds, in the node's hour field",
    show: Number,
  },
  { value: 'INSTRUCTION_TYPE', dimension: 'instructionType', field: 'instructionType', type: undefined, description: 'By instruction type', show: String },
  { value: 'DATE', dimension: 'date', field: 'date', type: 'String', description: "By UTC day, YYYY-MM-DD, in the node's date field", show: day },
  {
    value: 'PROGRAM_ID',
    dimension: 'program',
    field: 'programId',
    type: undefined,
    description: 'By program id (read from records: no hourly view keeps it)',
    show: String,
  },
  {
    value: 'DAY_OF_WEEK',
    dimension: 'dayOfWeek',
    field: 'dayOfWeek',
    type: 'Int',
    description: "By ISO day of week in UTC, 1 (Monday) to 7 (Sunday), in the node's dayOfWeek field",
    show: Number,
  },
  {
    value: 'WEEK',
    dimension: 'week',
    field: 'week',
    type: 'String',
    description: "By ISO week (Monday 00:00 UTC to Sunday 23:59:59): the date of its Monday, YYYY-MM-DD, in the node's week field",
    show: day,
  },
  {
    value: 'MONTH',
    dimension: 'month',
    field: 'month',
    type: 'String',
    description: "By UTC month, YYYY-MM, in the node's month field",
    show: (t) => day(t).slice(0, 7),
  },
];

/**
 * Sort fields besides the metrics: a group key (groups), which a record carries too
 * (`record`: listings sort by that column, then time; DATE is their time order itself).
 */
export const KEY_SORTS: Readonly<Record<string, { keys: readonly GroupKey[]; record?: ListingSort; description: string }>> = {
  DATE: { keys: ['time', 'date', 'week', 'month'], description: 'Groups: by their time key (HOUR, DATE, WEEK or MONTH). Records: by block time (their order)' },
  PROTOCOL: { keys: ['protocol'], record: 'protocol', description: 'Groups by PROTOCOL: by protocol name. Records: by protocol name, then time' },
  PROGRAM_ID: { keys: ['program'], record: 'programId', description: 'Groups by PROGRAM_ID: by program id. Records: by program id, then time' },
  INSTRUCTION_TYPE: {
    keys: ['instructionType'],
    record: 'instructionType',
    description: 'Groups by INSTRUCTION_TYPE: by instruction type. Records: by instruction type, then time',
  },
};
/** Record columns only a listing's sort may name; groups are sorted by metrics or keys instead. */
export const RECORD_SORTS: Readonly<Record<string, { column: RangeFilter; description: string }>> = {
  SLOT: { column: 'slot', description: 'Records: by slot, then time' },
  FEE: { column: 'fee', description: 'Records: by fee, then time' },
  COMPUTE_UNITS: { column: 'computeUnits', description: 'Records: by compute units, then time' },
  ACCOUNTS_COUNT: { column: 'accountsCount', description: 'Records: by accounts count, then time' },
};

/** A name's enum value: in UPPER_SNAKE_CASE (p95ComputeUnits: P95_COMPUTE_UNITS). */
const upperSnake = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();

/**
 * Metrics offered under another name than their measure's (the node field; the enum value is
 * its UPPER_SNAKE_CASE). The public system these clients were written for says
 * SUM_ACCOUNTS_COUNT and AVG_ACCOUNTS_COUNT (sumAccountsCount, avgAccountsCount), after the
 * accountsCount every record carries (SPEC.md's Transaction object, averageAccountsCount of its
 * statistics, the accounts_count column); our first names, SUM_ACCOUNTS and AVG_ACCOUNTS, stay
 * and answer the same, marked deprecated.
 */
export const METRIC_RENAMES: Readonly<Record<string, string>> = {
  sumAccounts: 'sumAccountsCount',
  avgAccounts: 'avgAccountsCount',
};

/** A metric's enum value: its node field in UPPER_SNAKE_CASE (its current name, for a renamed one). */
export const metricValue = (measure: string): string => upperSnake(METRIC_RENAMES[measure] ?? measure);

export interface QuestionVocabulary {
  metrics: readonly MetricWord[];
  /** Enum value to measure name. */
  metricOf: ReadonlyMap<string, string>;
  groupKeys: readonly GroupKeyWord[];
  keyOf: ReadonlyMap<string, GroupKeyWord>;
  measures: Measures;
}

/** A renamed metric's older word: the measure's own name, deprecated for the new one. */
const olderWord = (w: MetricWord): MetricWord => ({
  ...w,
  value: upperSnake(w.measure),
  field: w.measure,
  deprecated: `Use ${w.value} (node field ${w.field}): the same metric, named after the records' accountsCount as other GraphQL clients name it. ${upperSnake(w.measure)} keeps answering.`,
});

/**
 * The vocabulary of a catalog of measures: every measure declared as a metric, in declaration
 * order, and after a renamed metric its older name (deprecated).
 */
export function questionVocabulary(measures: Measures = MEASURES): QuestionVocabulary {
  const metrics = Object.entries(measures).flatMap(([name, m]) => {
    if (m.metric === undefined) return [];
    const word: MetricWord = {
      value: metricValue(name),
      measure: name,
      field: METRIC_RENAMES[name] ?? name,
      description: m.metric,
      percentile: !isDerived(m) && m.percentile === true,
    };
    return METRIC_RENAMES[name] === undefined ? [word] : [word, olderWord(word)];
  });
  return {
    metrics,
    metricOf: new Map(metrics.map((m) => [m.value, m.measure])),
    groupKeys: GROUP_KEYS,
    keyOf: new Map(GROUP_KEYS.map((k) => [k.value, k])),
    measures,
  };
}

// ---- the open questions' requests, in this vocabulary's words ---------------------------------

/** The keys failedTransactions groups by (its nodes show them). */
const FAILURE_KEYS: readonly GroupKey[] = ['protocol', 'instructionType', 'time'];

/** The GroupBy values of dimensions. */
const valuesOf = (v: QuestionVocabulary, dims: readonly GroupKey[]): string[] => v.groupKeys.filter((k) => dims.includes(k.dimension)).map((k) => k.value);

/** The words the open questions' requests are declared in (api/catalog/open-questions.ts): this vocabulary's enums and how sorts fit keys. */
export function openWords(v: QuestionVocabulary): OpenWords {
  const metricValues = v.metrics.map((m) => m.value);
  const recordSorts = [...Object.keys(RECORD_SORTS), ...Object.keys(KEY_SORTS).filter((k) => KEY_SORTS[k]!.record !== undefined)];
  return {
    groupBy: v.groupKeys.map((k) => k.value),
    timeKeys: v.groupKeys.filter((k) => isTimeDimension(k.dimension)).map((k) => k.value),
    metrics: v.metricOf,
    sorts: {
      all: [...metricValues, ...Object.keys(KEY_SORTS), ...Object.keys(RECORD_SORTS)],
      listing: ['DATE', ...recordSorts],
      groups: [...metricValues, ...Object.keys(KEY_SORTS)],
      keys: Object.fromEntries(Object.entries(KEY_SORTS).map(([field, s]) => [field, valuesOf(v, s.keys)])),
    },
    failures: { groupBy: valuesOf(v, FAILURE_KEYS), metrics: v.metrics.filter((m) => FAILURE_METRICS.has(m.measure as Metric)).map((m) => m.value) },
  };
}

/** A vocabulary with the open questions' requests declared in its words: built once with the GraphQL schema (schema.ts), whose enums are the same words. */
export interface OpenQuestionDoor {
  vocab: QuestionVocabulary;
  requests: OpenQuestions;
}

export function openQuestionDoor(measures: Measures = MEASURES): OpenQuestionDoor {
  const vocab = questionVocabulary(measures);
  return { vocab, requests: openQuestions(openWords(vocab)) };
}

/** GroupBy values (checked by the request) as the model's dimensions. */
export const keysOf = (values: readonly string[] | undefined, v: QuestionVocabulary): GroupKey[] => (values ?? []).map((n) => v.keyOf.get(n)!.dimension);
/** Metric values (checked by the request) as the measures they read, in the order named. */
export const metricsOf = (values: readonly string[] | undefined, v: QuestionVocabulary): Metric[] => (values ?? []).map((n) => v.metricOf.get(n)! as Metric);
