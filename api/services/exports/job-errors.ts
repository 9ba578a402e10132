// How a job's run ends other than by completing, thrown from deep in a run and sorted out by
// the service (export-service.ts run()).

/** A failure whose message is meant for the job's owner (the job is FAILED with it). */
export class JobFailure extends Error {}
/** Thrown between chunks when the job was cancelled meanwhile. */
export class Cancelled extends Error {}
/** Thrown between chunks when the service is closing: the job stays RUNNING on disk and resumes at the next start. */
export class Stopping extends Error {}
/** Thrown at a chunk boundary when a queued job has a better claim to the worker: the job goes back to QUEUED and resumes there. */
export class Yielded extends Error {}
