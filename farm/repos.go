package farm

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/zap"
)

// RepoRef names a repository in the farm's repos bucket: the SHA-256 of a
// deterministic tar.gz of its folder, so a repository is stored once and a
// worker fetches it once, whatever run names it.
type RepoRef struct {
	Object string `json:"object"`
	// Name is the folder's base name (the sanitised copy's): a worker's
	// copy has the same, so the workspace the editor shows, and whatever
	// the plugin sends of it, is named as on the coordinator.
	Name string `json:"name"`
	Size int64  `json:"size"`
}

var repoObject = regexp.MustCompile(`^sha256-[0-9a-f]{64}$`)

// packRepo writes dir as a tar.gz into w: folders and regular files only
// (a sanitised copy holds nothing else; anything else is refused), in
// sorted order, with no times, owners or names of the machine, so the
// same content gives the same bytes.
func packRepo(ctx context.Context, dir string, w io.Writer) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	var paths []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.Type()&^fs.ModeDir != 0 {
			return fmt.Errorf("%s: only folders and regular files can be sent to workers", p)
		}
		if p != dir {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pack repository %s: %w", dir, err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return fmt.Errorf("pack repository %s: %w", dir, err)
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: 0o600, Format: tar.FormatPAX}
		switch {
		case info.IsDir():
			hdr.Typeflag, hdr.Name, hdr.Mode = tar.TypeDir, hdr.Name+"/", 0o700
		default:
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
			if info.Mode()&0o100 != 0 {
				hdr.Mode = 0o700
			}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("pack repository %s: %w", dir, err)
		}
		if hdr.Typeflag == tar.TypeReg {
			if err := copyFile(tw, p); err != nil {
				return fmt.Errorf("pack repository %s: %w", dir, err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		return fmt.Errorf("pack repository %s: %w", dir, err)
	}
	if err := gz.Close(); err != nil {
		return fmt.Errorf("pack repository %s: %w", dir, err)
	}
	return nil
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// ShipRepos puts each folder of dirs in the repos bucket (unless a copy of
// the same content is there already, sent less than a quarter of
// RepoMaxAge ago) and returns where each went.
func (q *Queue) ShipRepos(ctx context.Context, dirs []string, log *zap.Logger) (map[string]RepoRef, error) {
	refs := map[string]RepoRef{}
	obs, err := q.objectStore(ctx, ReposBucket)
	if err != nil {
		return nil, err
	}
	for _, dir := range dirs {
		if _, done := refs[dir]; done {
			continue
		}
		ref, sent, err := shipRepo(ctx, q.js.Conn(), obs, dir, q.cfg.RepoMaxAge/4)
		if err != nil {
			return nil, err
		}
		refs[dir] = ref
		log.Info("repository in the farm's object store", zap.String("repo", dir), zap.String("object", ref.Object),
			zap.Int64("bytes", ref.Size), zap.Bool("sent", sent))
	}
	return refs, nil
}

// KeepReposFresh sends dirs again, every eighth of RepoMaxAge until ctx
// ends, when their copies in the repos bucket are over a quarter of it
// old, so that a run longer than RepoMaxAge never finds its repositories
// gone from the farm.
func (q *Queue) KeepReposFresh(ctx context.Context, dirs []string, log *zap.Logger) {
	if q.cfg.RepoMaxAge/8 <= 0 || len(dirs) == 0 {
		return
	}
	every(ctx, q.cfg.RepoMaxAge/8, func(time.Time) {
		if _, err := q.ShipRepos(ctx, dirs, log); err != nil && ctx.Err() == nil {
			log.Warn("send the run's repositories to the farm again", zap.Error(err))
		}
	})
}

// shipRepo sends dir unless the bucket has its content, sent within
// fresh (0: at any time).
func shipRepo(ctx context.Context, nc *nats.Conn, obs jetstream.ObjectStore, dir string, fresh time.Duration) (RepoRef, bool, error) {
	tmp, err := os.CreateTemp("", "dialogfarm-repo-*.tar.gz")
	if err != nil {
		return RepoRef{}, false, fmt.Errorf("pack repository %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	sum := sha256.New()
	if err := packRepo(ctx, dir, io.MultiWriter(tmp, sum)); err != nil {
		return RepoRef{}, false, err
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err == nil {
		_, err = tmp.Seek(0, io.SeekStart)
	}
	if err != nil {
		return RepoRef{}, false, fmt.Errorf("pack repository %s: %w", dir, err)
	}
	ref := RepoRef{Object: "sha256-" + hex.EncodeToString(sum.Sum(nil)), Name: filepath.Base(dir), Size: size}
	var info *jetstream.ObjectInfo
	err = retry(ctx, nc, func(ctx context.Context) (err error) {
		info, err = obs.GetInfo(ctx, ref.Object)
		if errors.Is(err, jetstream.ErrObjectNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		return ref, false, fmt.Errorf("look up repository %s in the object store: %w", dir, err)
	}
	if info != nil && !info.Deleted && int64(info.Size) == size && (fresh == 0 || time.Since(info.ModTime) < fresh) {
		return ref, false, nil
	}
	// One try, however long the repository takes to send; a refusal says so.
	err = refusedDuring(ctx, nc, func(ctx context.Context) error {
		_, err := obs.Put(ctx, jetstream.ObjectMeta{Name: ref.Object, Description: filepath.Base(dir)}, tmp)
		return err
	})
	if err != nil {
		return ref, false, fmt.Errorf("put repository %s in the object store: %w", dir, err)
	}
	return ref, true, nil
}

// unpack writes the tar.gz r into dir, through an os.Root so that no name
// leaves it, accepting folders and regular files only.
func unpack(r io.Reader, dir string) (int, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	gz, err := gzip.NewReader(r)
	if err != nil {
		return 0, err
	}
	tr := tar.NewReader(gz)
	files := 0
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return files, err
		}
		name := filepath.FromSlash(strings.TrimSuffix(hdr.Name, "/"))
		if !filepath.IsLocal(name) {
			return files, fmt.Errorf("entry %q: not a path inside the repository", hdr.Name)
		}
		mode := fs.FileMode(0o600)
		if hdr.Mode&0o100 != 0 {
			mode = 0o700
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := root.MkdirAll(name, 0o700); err != nil {
				return files, err
			}
		case tar.TypeReg:
			if err := root.MkdirAll(filepath.Dir(name), 0o700); err != nil {
				return files, err
			}
			f, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			if err != nil {
				return files, err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return files, err
			}
			files++
		default:
			return files, fmt.Errorf("entry %q: type %q is neither a folder nor a regular file", hdr.Name, hdr.Typeflag)
		}
	}
	// To the gzip trailer, which checks the content's CRC.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return files, err
	}
	return files, nil
}
