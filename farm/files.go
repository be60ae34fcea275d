package farm

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"

	"dialogfarm/internal/runfiles"
)

// The object store buckets: the repositories workers drive in (written by
// coordinators, read by workers) and the files that come back with a
// dialogue, its failure artifacts (written by workers, read by
// coordinators).
const (
	ReposBucket = "dfarm_repos"
	FilesBucket = "dfarm_files"
)

// FileRef is a file a worker sent back with a result or attempt.
type FileRef struct {
	// Object is its name in the files bucket.
	Object string `json:"object"`
	// Name is the file's base name in the dialogue's artifacts folder.
	Name string `json:"name"`
	// Digest is "SHA-256=<base64url>" of its content, as the object
	// store writes it: the collector takes the object only with it.
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

// maxFiles and maxFileSize bound what one result may bring back.
const (
	maxFiles    = 16
	maxFileSize = 64 << 20
)

// objectStore opens one of the farm's buckets.
func (q *Queue) objectStore(ctx context.Context, bucket string) (jetstream.ObjectStore, error) {
	var obs jetstream.ObjectStore
	err := retry(ctx, q.js.Conn(), func(ctx context.Context) (err error) {
		obs, err = q.js.ObjectStore(ctx, bucket)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open the farm's %s bucket: %w", bucket, err)
	}
	return obs, nil
}

// sendFiles puts the regular files of dir (a failed dialogue's artifacts)
// in the files bucket and returns their refs. A worker may write that
// bucket but not read it, so it publishes the object's chunks and meta
// itself (the library's Put first reads what the name held).
func (q *Queue) sendFiles(ctx context.Context, run, id string, attempt int, dir string) ([]FileRef, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("send artifacts %s: %w", dir, err)
	}
	var refs []FileRef
	for _, e := range entries {
		if !e.Type().IsRegular() || len(refs) == maxFiles {
			continue
		}
		name := fmt.Sprintf("%s.%s.%s.%d.%s", token(run), token(id), q.user, attempt, token(e.Name()))
		ref, err := q.putFile(ctx, name, filepath.Join(dir, e.Name()))
		if err != nil {
			return refs, err
		}
		ref.Name = e.Name()
		refs = append(refs, ref)
	}
	return refs, nil
}

// dropSent removes the artifacts sent back from the worker's folder, and
// the folder once empty: the run folder has them, and a standing worker
// would otherwise keep every failure's.
func dropSent(dir string, sent []FileRef) {
	for _, f := range sent {
		_ = os.Remove(filepath.Join(dir, f.Name))
	}
	_ = os.Remove(dir)
}

func (q *Queue) putFile(ctx context.Context, name, path string) (FileRef, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileRef{}, fmt.Errorf("send %s: %w", path, err)
	}
	defer f.Close()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return FileRef{}, err
	}
	nuid := hex.EncodeToString(b)
	chunkSubj := "$O." + FilesBucket + ".C." + nuid
	sum := sha256.New()
	var size int64
	var chunks uint32
	buf := make([]byte, 128<<10)
	for {
		n, rerr := io.ReadFull(f, buf)
		if n > 0 {
			if size += int64(n); size > maxFileSize {
				return FileRef{}, fmt.Errorf("send %s: larger than %d MiB", path, maxFileSize>>20)
			}
			sum.Write(buf[:n])
			if err := retry(ctx, q.js.Conn(), func(ctx context.Context) error {
				_, err := q.js.Publish(ctx, chunkSubj, buf[:n])
				return err
			}); err != nil {
				return FileRef{}, fmt.Errorf("send %s: %w", path, err)
			}
			chunks++
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return FileRef{}, fmt.Errorf("send %s: %w", path, rerr)
		}
	}
	info := jetstream.ObjectInfo{ObjectMeta: jetstream.ObjectMeta{Name: name}, Bucket: FilesBucket, NUID: nuid,
		Size: uint64(size), Chunks: chunks, Digest: jetstream.GetObjectDigestValue(sum)}
	data, err := json.Marshal(info)
	if err != nil {
		return FileRef{}, err
	}
	meta := nats.NewMsg("$O." + FilesBucket + ".M." + base64.URLEncoding.EncodeToString([]byte(name)))
	meta.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	meta.Data = data
	if err := retry(ctx, q.js.Conn(), func(ctx context.Context) error {
		_, err := q.js.PublishMsg(ctx, meta)
		return err
	}); err != nil {
		return FileRef{}, fmt.Errorf("send %s: %w", path, err)
	}
	return FileRef{Object: name, Digest: info.Digest, Size: size}, nil
}

// fetchFiles writes the files a result or attempt brought back into dir,
// each only when its content is the digest the (sealed) result names, and
// deletes them from the bucket; it returns the errors of those that did
// not come.
func (q *Queue) fetchFiles(ctx context.Context, refs []FileRef, dir string) error {
	if len(refs) > maxFiles {
		return fmt.Errorf("%d files sent back, more than %d", len(refs), maxFiles)
	}
	obs, err := q.objectStore(ctx, FilesBucket)
	if err != nil {
		return err
	}
	if err := runfiles.MkdirAll(dir); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	var errs []error
	for i, ref := range refs {
		name := filepath.Base(ref.Name)
		if !filepath.IsLocal(name) || name != ref.Name {
			name = "file-" + strconv.Itoa(i+1)
		}
		if err := fetchFile(ctx, obs, ref, filepath.Join(dir, name)); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := obs.Delete(ctx, ref.Object); err != nil {
			errs = append(errs, fmt.Errorf("delete %s from the farm: %w", ref.Object, err))
		}
	}
	return errors.Join(errs...)
}

func fetchFile(ctx context.Context, obs jetstream.ObjectStore, ref FileRef, path string) error {
	res, err := obs.Get(ctx, ref.Object)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", ref.Object, err)
	}
	defer res.Close()
	info, err := res.Info()
	if err != nil {
		return fmt.Errorf("fetch %s: %w", ref.Object, err)
	}
	if info.Digest != ref.Digest || int64(info.Size) != ref.Size || ref.Size > maxFileSize {
		return fmt.Errorf("fetch %s: its content is not what the result names (%s, %d bytes; want %s, %d)", ref.Object, info.Digest, info.Size, ref.Digest, ref.Size)
	}
	data, err := io.ReadAll(io.LimitReader(res, maxFileSize+1))
	if err != nil { // the library checks the content against the digest at the end
		return fmt.Errorf("fetch %s: %w", ref.Object, err)
	}
	if err := runfiles.WriteAtomic(path, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// collectFiles fetches the files a bound result or attempt brought back
// into the run's artifacts folder and points the dialogue's Artifacts at
// it; a file that does not come is logged, and the record kept.
func (q *Queue) collectFiles(ctx context.Context, cfg CollectConfig, id string, refs []FileRef, artifacts *string, log *zap.Logger) {
	if len(refs) == 0 || cfg.FilesDir == "" {
		return
	}
	dir := filepath.Join(cfg.FilesDir, token(id))
	if err := q.fetchFiles(ctx, refs, dir); err != nil {
		log.Warn("fetch a dialogue's files from the farm", zap.String("config", id), zap.Error(err))
	}
	*artifacts = dir
}
