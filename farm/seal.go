package farm

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// A job is sealed to the deliveries of it: it carries a random nonce and a
// token, an HMAC of the run, the config and the nonce under the run's key,
// which only coordinators can read (the dfarm_runs bucket). A worker echoes
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

// runKey is run's sealing key, made by the first coordinator that asks.
func (q *Queue) runKey(ctx context.Context, run string) ([]byte, error) {
	if k, ok := q.keys.Load(run); ok {
		return k.([]byte), nil
	}
	var key []byte
	err := retry(ctx, q.js.Conn(), func(ctx context.Context) error {
		kv, err := q.js.KeyValue(ctx, RunsBucket)
		if err != nil {
			return err
		}
		e, err := kv.Get(ctx, token(run))
		if err == nil {
			key = e.Value()
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyNotFound) {
			return err
		}
		fresh := make([]byte, 32)
		if _, err := rand.Read(fresh); err != nil {
			return err
		}
		_, err = kv.Create(ctx, token(run), fresh)
		if errors.Is(err, jetstream.ErrKeyExists) {
			// Another coordinator of the run made it first: take theirs.
			if e, err = kv.Get(ctx, token(run)); err != nil {
				return err
			}
			fresh = e.Value()
		} else if err != nil {
			return err
		}
		key = fresh
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("the key of run %s: %w", run, err)
	}
	q.keys.Store(run, key)
	return key, nil
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
