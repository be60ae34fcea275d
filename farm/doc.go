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
//	DFARM_RESULTS  results, under the worker's public key:
//	               dfarm.results.<run>.<config>.<user>
//	DFARM_DEAD     the collector's dead letters: dfarm.dead.<run>.<config>
//	DFARM_EVENTS   attempts that will be retried, and the max-deliveries
//	               advisories of the workers consumer
//
// and the buckets dfarm_workers (health), dfarm_repos (repositories, by
// content) and dfarm_files (failure artifacts on their way back).
//
// Exactly one record per config after any crash comes from the collector:
// it records the first result of a config that is sealed for it (see
// seal.go: a result is accepted only from a worker the job was delivered
// to) and skips configs its record log already holds; a config enqueued
// again loses its earlier outcomes. No subject keeps only its first
// message, since any client can have the server put a reply on any
// subject: such a message must not keep the genuine outcome out. Work is
// at least once: a worker that dies mid-dialogue stops sending in-progress
// heartbeats, the job is redelivered after AckWait, and the dialogue is
// driven again.
//
// Who may do what (see auth.go): `farm serve` lets in only its users, each
// with the rights of its role; a worker reads its own replies only and
// writes only its own results, attempts and health.
package farm
