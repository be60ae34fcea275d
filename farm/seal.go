package farm

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// A job is sealed to the deliveries of it: it carries a random nonce and a
// token, an HMAC of the run, the config and the nonce under the run's key,
// which only the coordinator of the run knows (see SetRunKey). A worker echoes
// both in its result, which it can publish only under its own name
// (dfarm.results.<run>.<config>.<user>, see permissions); the collector
// takes a result only when its token is the job's. So a result is accepted
// only from a worker the job was delivered to (the job, token included, is
// delivered to the puller's own inbox, which no other worker may read), and
// a result forged under another name, or for a config never delivered to
// the forger, is refused without taking the genuine result's place.

// sealed says whether token is the seal of run's config id with nonce.
func sealed(key []byte, run, id, nonce, token string) bool {
	if nonce == "" || token == "" {
		return false
	}
	return hmac.Equal([]byte(token), []byte(seal(key, run, id, nonce)))
}

// seal is the token of run's config id with nonce under key.
func seal(key []byte, run, id, nonce string) string {
	m := hmac.New(sha256.New, key)
	for _, s := range []string{run, id, nonce} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return hex.EncodeToString(m.Sum(nil))
}

func newNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a job nonce: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// NewRunKey makes a run's sealing key.
func NewRunKey() ([]byte, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("make a run key: %w", err)
	}
	return key, nil
}

// SetRunKey gives run's sealing key. A coordinator keeps it where only it
// can read it (the run folder's farm.json) and sets it again when it
// resumes, so that the jobs it enqueued before are still its own. It is
// never stored on the farm: any stream there can be written by a client
// that has the server send a reply to one of its subjects.
func (q *Queue) SetRunKey(run string, key []byte) {
	q.keys.Store(run, key)
}

// runKey is run's sealing key: the one set, or one made now for this
// process (a run enqueued and collected by one process only).
func (q *Queue) runKey(run string) ([]byte, error) {
	if k, ok := q.keys.Load(run); ok {
		return k.([]byte), nil
	}
	key, err := NewRunKey()
	if err != nil {
		return nil, err
	}
	k, _ := q.keys.LoadOrStore(run, key)
	return k.([]byte), nil
}

// subjectUser splits a result's or attempt's subject
// (prefix.<config>.<user>) into its config token and the user that
// published it; ok is false for any other shape.
func subjectUser(subject, prefix string) (config, user string, ok bool) {
	rest, ok := strings.CutPrefix(subject, prefix)
	if !ok {
		return "", "", false
	}
	config, user, ok = strings.Cut(rest, ".")
	if !ok || config == "" || user == "" || strings.Contains(user, ".") {
		return "", "", false
	}
	return config, user, true
}
