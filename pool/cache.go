package pool

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"dialogfarm/dialog"
	"dialogfarm/internal/runfiles"
)

// Cache stores each member's answer to each request, so a re-run or a
// resumed run never pays twice for the same call. An entry is one JSON file
// named by the SHA-256 of the member's identity and the exact request it
// would send (model, messages, temperature, max_tokens, stream); the API key
// is not part of either. Writes go to a temporary file renamed into place,
// so concurrent writers and crashes never leave a torn entry.
type Cache struct {
	dir string
}

// OpenCache opens (creating it if needed) a cache in dir.
func OpenCache(dir string) (*Cache, error) {
	if err := runfiles.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("open response cache: %w", err)
	}
	return &Cache{dir: dir}, nil
}

// Dir is the cache's folder.
func (c *Cache) Dir() string { return c.dir }

// cacheEntry is what one file holds.
type cacheEntry struct {
	Key       string           `json:"key"`
	Candidate dialog.Candidate `json:"candidate"`
}

// cacheKey hashes the member's identity and its request.
func cacheKey(member, baseURL string, request any) (string, error) {
	body, err := json.Marshal(struct {
		Member  string `json:"member"`
		BaseURL string `json:"base_url"`
		Request any    `json:"request"`
	}{member, redactURL(baseURL), request})
	if err != nil {
		return "", fmt.Errorf("cache key: %w", err)
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:]), nil
}

func (c *Cache) path(key string) string {
	return filepath.Join(c.dir, key[:2], key+".json")
}

// Get returns the cached candidate for key; ok is false on a miss.
func (c *Cache) Get(key string) (dialog.Candidate, bool, error) {
	b, err := os.ReadFile(c.path(key))
	if errors.Is(err, fs.ErrNotExist) {
		return dialog.Candidate{}, false, nil
	}
	if err != nil {
		return dialog.Candidate{}, false, fmt.Errorf("read cache entry %s: %w", key, err)
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil || e.Key != key {
		return dialog.Candidate{}, false, fmt.Errorf("read cache entry %s: corrupt entry", key)
	}
	return e.Candidate, true, nil
}

// Put stores cand under key.
func (c *Cache) Put(key string, cand dialog.Candidate) error {
	cand.Cached = false
	b, err := json.Marshal(cacheEntry{Key: key, Candidate: cand})
	if err != nil {
		return fmt.Errorf("write cache entry %s: %w", key, err)
	}
	dir := filepath.Dir(c.path(key))
	if err := runfiles.MkdirAll(dir); err != nil {
		return fmt.Errorf("write cache entry %s: %w", key, err)
	}
	if err := runfiles.WriteAtomic(c.path(key), b); err != nil {
		return fmt.Errorf("write cache entry %s: %w", key, err)
	}
	return nil
}
