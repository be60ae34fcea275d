package farm

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/nats-io/nkeys"
	"gopkg.in/yaml.v3"

	"dialogfarm/internal/runfiles"
)

// CredsDir is the folder of a farm store that holds the credentials `farm
// serve` makes.
const CredsDir = "creds"

// Creds are the credentials of a farm: one coordinator's and one per
// worker machine, each an NKey seed file (mode 0600) that `--creds` takes.
type Creds struct {
	// Dir holds the files.
	Dir string
	// Coordinator is the coordinator's file (runs and status --nats).
	Coordinator string
	// Workers are the workers' files, one per machine: worker-1.nk, ...
	Workers []string
	// Users lets them in (their public keys and roles); UsersFile is the
	// same list as a --users file, for the other nodes of a cluster.
	Users     []User
	UsersFile string
	// Made are the files made now (the others were there already).
	Made []string
}

// EnsureCreds makes, in dir, the coordinator's credentials and those of
// workers worker machines, keeping any already there: a farm restarted on
// its store lets the same machines in, and a larger number adds files. A
// file that others may read is refused, as ssh refuses a key file.
func EnsureCreds(dir string, workers int) (Creds, error) {
	c := Creds{Dir: dir, UsersFile: filepath.Join(dir, "users.yaml")}
	if workers < 1 {
		return c, fmt.Errorf("farm credentials: %d workers: want at least 1", workers)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return c, fmt.Errorf("create farm credentials folder %s: %w", dir, err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return c, fmt.Errorf("farm credentials folder %s: %w", dir, err)
	}
	ensure := func(name, role string) (string, error) {
		path := filepath.Join(dir, name)
		pub, made, err := ensureSeed(path)
		if err != nil {
			return "", err
		}
		if made {
			c.Made = append(c.Made, path)
		}
		c.Users = append(c.Users, User{Nkey: pub, Role: role})
		return path, nil
	}
	var err error
	if c.Coordinator, err = ensure("coordinator.nk", "coordinator"); err != nil {
		return c, err
	}
	for i := range workers {
		path, err := ensure(fmt.Sprintf("worker-%d.nk", i+1), "worker")
		if err != nil {
			return c, err
		}
		c.Workers = append(c.Workers, path)
	}
	// Workers beyond the number asked for (an earlier start asked for
	// more) keep their access: their files are still out there.
	for i := workers + 1; ; i++ {
		path := filepath.Join(dir, fmt.Sprintf("worker-%d.nk", i))
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if _, err := ensure(filepath.Base(path), "worker"); err != nil {
			return c, err
		}
		c.Workers = append(c.Workers, path)
	}
	data, err := yaml.Marshal(c.Users)
	if err != nil {
		return c, err
	}
	head := "# The users of this farm (public keys, not secrets): `farm serve --users` on the other nodes of a cluster.\n"
	if err := runfiles.WriteFile(c.UsersFile, append([]byte(head), data...)); err != nil {
		return c, fmt.Errorf("write %s: %w", c.UsersFile, err)
	}
	return c, nil
}

// ensureSeed reads the user NKey seed in path, or makes one there, and
// returns its public key.
func ensureSeed(path string) (pub string, made bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		kp, err := nkeys.CreateUser()
		if err != nil {
			return "", false, fmt.Errorf("make %s: %w", path, err)
		}
		defer kp.Wipe()
		seed, err := kp.Seed()
		if err != nil {
			return "", false, fmt.Errorf("make %s: %w", path, err)
		}
		pub, err := kp.PublicKey()
		if err != nil {
			return "", false, fmt.Errorf("make %s: %w", path, err)
		}
		body := fmt.Sprintf("# dialogfarm farm credentials (user NKey seed, public key %s).\n"+
			"# A secret: copy it to the one machine it is for, mode 0600. Use with --creds.\n%s\n", pub, seed)
		clear(seed)
		if err := createExclusive(path, []byte(body)); errors.Is(err, fs.ErrExist) {
			return ensureSeed(path) // another farm serve on this store made it first
		} else if err != nil {
			return "", false, err
		}
		return pub, true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read farm credentials: %w", err)
	}
	defer clear(data)
	info, err := os.Stat(path)
	if err != nil {
		return "", false, fmt.Errorf("read farm credentials: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("farm credentials %s: mode %04o lets others read it; chmod 600 %s", path, info.Mode().Perm(), path)
	}
	kp, err := nkeys.ParseDecoratedUserNKey(data)
	if err != nil {
		return "", false, fmt.Errorf("farm credentials %s: no user NKey seed (SU...): %w", path, err)
	}
	defer kp.Wipe()
	if pub, err = kp.PublicKey(); err != nil {
		return "", false, fmt.Errorf("farm credentials %s: %w", path, err)
	}
	return pub, false, nil
}

// createExclusive writes data to path (mode 0600) through a temporary file
// linked into place: a crash leaves no partial file, and a file already
// there (another process made it first) is never replaced.
func createExclusive(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadUsers reads a --users file: a YAML list of {nkey, role}, every entry
// checked, an error naming the file, the entry and the field.
func ReadUsers(path string) ([]User, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --users: %w", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	var users []User
	if err := dec.Decode(&users); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("%s: no users", path)
	}
	for i, u := range users {
		if err := u.Check(); err != nil {
			return nil, fmt.Errorf("%s: user %d: %w", path, i+1, err)
		}
	}
	return users, nil
}
