// Package farm runs a simulation farm on NATS JetStream: a work queue of
// chat configs, simulator workers that pull one config at a time and drive
// it, and a collector that writes exactly one record per config into the
// run folder.
//
// On one machine (the default for run and drive) the NATS server is
// embedded in the process, with its file store inside the run folder, and
// the user never sees it. For many machines, `dialogfarm farm serve` (or
// any NATS cluster with JetStream) holds the queue, `dialogfarm worker` on
// each machine pulls jobs and drives its own editors, and the process that
// enqueued the run collects the results into its run folder.
//
// The streams (see queue.go):
//
//	DFARM_JOBS     work queue, one subject per config: dfarm.jobs.<run>.<config>
//	DFARM_RESULTS  one message per config subject, the first wins:
//	               dfarm.results.<run>.<config>
//	DFARM_DEAD     dead letters, one per config: dfarm.dead.<run>.<config>
//	DFARM_EVENTS   attempts that will be retried, and the max-deliveries
//	               advisories of the workers consumer
//
// Exactly one record per config after any crash comes from the results
// stream, not from message-id deduplication (which forgets acknowledged
// work-queue messages after a restart): a result is published with
// "expected last sequence for this subject = 0", so a second result for the
// same config fails with "wrong last sequence" and is dropped; the collector
// also skips configs its record log already holds. Work is at least once: a
// worker that dies mid-dialogue stops sending in-progress heartbeats, the
// job is redelivered after AckWait, and the dialogue is driven again.
package farm
