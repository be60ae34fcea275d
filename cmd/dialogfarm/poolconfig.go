package main

// The pool and judge configuration: dialogfarm.yaml's pool: and judge:
// sections, then DIALOGFARM_* environment variables, then --set flags,
// each overriding the one before, decoded onto the packages' Default...()
// configs. Keys not known are errors, so a typo never silently keeps a
// default.
//
// Every field has an environment variable named after its path:
// pool.retry.max_attempts is DIALOGFARM_POOL_RETRY_MAX_ATTEMPTS,
// judge.params.max_chars.explain is DIALOGFARM_JUDGE_PARAMS_MAX_CHARS_EXPLAIN.
// A member's fields go by index or name: DIALOGFARM_POOL_MEMBERS_0_MODEL or,
// for the member named coder-a, DIALOGFARM_POOL_MEMBERS_CODER_A_MODEL.
// --set takes the same paths with dots (--set pool.members.coder-a.rpm=60).

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/cobra"
	"github.com/spf13/viper"
	"go.uber.org/zap"

	"dialogfarm/dialog/vocab"
	"dialogfarm/judge"
	"dialogfarm/pool"
	"dialogfarm/respond"
)

// poolSettings is the configuration of the candidate pool and the judge.
type poolSettings struct {
	Pool pool.Config
	// JudgeModel is the judge's endpoint; nil means rules-only.
	JudgeModel *pool.MemberConfig
	Judge      judge.Config
}

// judgeSection is the judge: section of dialogfarm.yaml.
type judgeSection struct {
	Endpoint     map[string]any `yaml:"endpoint"`
	judge.Config `yaml:",squash"`
}

// defaultJudgeModel is what the judge endpoint's omitted fields get:
// deterministic, short answers, no streaming.
func defaultJudgeModel() pool.MemberConfig {
	m := pool.DefaultMemberConfig()
	zero := float32(0)
	m.Name, m.Temperature, m.MaxTokens, m.Stream = "judge", &zero, 300, false
	return m
}

// addPoolFlags adds --set to a command that reads the pool and judge
// configuration.
func addPoolFlags(cmd *cobra.Command) {
	cmd.Flags().StringArray("set", nil, "override a pool/judge config field, e.g. --set judge.endpoint.model=gpt-4o or --set pool.members.coder-a.rpm=60 (repeatable)")
}

// loadPoolSettings reads the pool: and judge: sections from path (or, when
// path is "", from the --config file) and applies DIALOGFARM_* variables
// and --set flags. The API keys are read later, by whoever needs them
// (newPoolResponder, the judge command).
func (a *app) loadPoolSettings(path string) (poolSettings, error) {
	src, name := a.v, a.configPath
	if path != "" {
		src, name = viper.New(), path
		src.SetConfigFile(path)
		if err := src.ReadInConfig(); err != nil {
			return poolSettings{}, fmt.Errorf("read pool config %s: %w", path, err)
		}
	}
	for _, section := range []string{"pool", "judge"} {
		switch src.Get(section).(type) {
		case nil, map[string]any, map[any]any:
		default:
			return poolSettings{}, fmt.Errorf("config file %s: %s: want a mapping of settings, got %v", name, section, src.Get(section))
		}
	}
	tree := map[string]any{"pool": asMap(deepCopy(src.Get("pool"))), "judge": asMap(deepCopy(src.Get("judge")))}
	// Each layer is decoded as it is applied, so an error names the file,
	// variable or flag the bad value came from.
	if _, err := decodeSettings(tree); err != nil {
		return poolSettings{}, fmt.Errorf("config file %s: %w", name, err)
	}
	for _, p := range settingPaths(tree) {
		val, ok := os.LookupEnv(envName(p))
		if !ok || val == "" {
			continue
		}
		if err := setPath(tree, p, val); err != nil {
			return poolSettings{}, fmt.Errorf("environment variable %s: %w", envName(p), err)
		}
		if _, err := decodeSettings(tree); err != nil {
			return poolSettings{}, fmt.Errorf("environment variable %s=%q: %w", envName(p), val, err)
		}
	}
	for _, kv := range a.v.GetStringSlice("set") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return poolSettings{}, fmt.Errorf("--set %q: want path=value", kv)
		}
		if name := fileOnlyField(k); name != "" {
			return poolSettings{}, fmt.Errorf("--set %s: %s is set in the config file only", kv, name)
		}
		if err := setPath(tree, strings.TrimSpace(k), v); err != nil {
			return poolSettings{}, fmt.Errorf("--set %s: %w", k, err)
		}
		if _, err := decodeSettings(tree); err != nil {
			return poolSettings{}, fmt.Errorf("--set %s: %w", kv, err)
		}
	}
	s, err := decodeSettings(tree)
	allow := a.keyAllow
	if path != "" { // a --pool file's own allow lists count too
		more, aerr := readKeyAllow(src, path)
		if aerr != nil {
			return s, aerr
		}
		allow.KeyEnvs = append(slices.Clone(allow.KeyEnvs), more.KeyEnvs...)
		allow.InsecureHosts = append(slices.Clone(allow.InsecureHosts), more.InsecureHosts...)
	}
	allow.applyAll(&s)
	return s, err
}

// resolveKeys reads the API keys from the variables api_key_env names: the
// judge endpoint's, and the pool members' when withPool.
func (s *poolSettings) resolveKeys(withPool bool) error {
	var err error
	if withPool {
		err = s.Pool.ResolveKeys(os.LookupEnv)
	}
	if s.JudgeModel != nil {
		err = errors.Join(err, s.JudgeModel.ResolveKey(os.LookupEnv))
	}
	return err
}

// decodeSettings decodes the configuration tree onto the defaults.
func decodeSettings(tree map[string]any) (poolSettings, error) {
	s := poolSettings{Pool: pool.DefaultConfig(), Judge: judge.DefaultConfig()}
	ps := asMap(tree["pool"])
	members, _ := ps["members"].([]any)
	rest := map[string]any{}
	for k, v := range ps {
		if k != "members" {
			rest[k] = v
		}
	}
	if err := decode(rest, &s.Pool); err != nil {
		return s, fmt.Errorf("pool config: %w", err)
	}
	for i, raw := range members {
		m := pool.DefaultMemberConfig()
		if err := decode(raw, &m); err != nil {
			return s, fmt.Errorf("pool config: member %d: %w", i, err)
		}
		s.Pool.Members = append(s.Pool.Members, m)
	}
	js := judgeSection{Config: judge.DefaultConfig()}
	if err := decode(tree["judge"], &js); err != nil {
		return s, fmt.Errorf("judge config: %w", err)
	}
	s.Judge = js.Config
	if len(js.Endpoint) > 0 {
		m := defaultJudgeModel()
		if err := decode(js.Endpoint, &m); err != nil {
			return s, fmt.Errorf("judge config: endpoint: %w", err)
		}
		if m.Model != "" {
			s.JudgeModel = &m
		}
	}
	// Every number is checked as each layer is applied, so an error names
	// the file, variable or flag that put it out of range.
	if err := s.Pool.ValidateRanges(); err != nil {
		return s, fmt.Errorf("pool config: %w", err)
	}
	if err := s.Judge.Validate(); err != nil {
		return s, fmt.Errorf("judge config: %w", err)
	}
	if s.JudgeModel != nil {
		if err := s.JudgeModel.ValidateRanges(); err != nil {
			return s, fmt.Errorf("judge config: endpoint: %w", err)
		}
	}
	return s, nil
}

// decode fills out (holding defaults) from a YAML-shaped value: yaml tags,
// strings converted to numbers, bools and durations, unknown keys refused.
func decode(in any, out any) error {
	if in == nil {
		return nil
	}
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		TagName: "yaml", WeaklyTypedInput: true, ErrorUnused: true, Result: out,
		DecodeHook: mapstructure.ComposeDecodeHookFunc(durationWithUnit, mapstructure.StringToTimeDurationHookFunc()),
	})
	if err != nil {
		return err
	}
	return decodeMessage(d.Decode(in))
}

// durationWithUnit refuses a number where a duration is wanted: "timeout:
// 30" would otherwise be 30 nanoseconds.
func durationWithUnit(from, to reflect.Type, data any) (any, error) {
	if to != reflect.TypeFor[time.Duration]() || from.Kind() == reflect.String {
		return data, nil
	}
	if v := reflect.ValueOf(data); v.CanInt() && v.Int() == 0 || v.CanUint() && v.Uint() == 0 || v.CanFloat() && v.Float() == 0 {
		return data, nil
	}
	return nil, fmt.Errorf("value %v has no unit: write a duration such as 30s or 2m", data)
}

// decodeMessage rewrites mapstructure's errors as one line per field,
// each naming the field and the value that did not parse.
func decodeMessage(err error) error {
	if err == nil {
		return nil
	}
	var out []string
	var walk func(error)
	walk = func(e error) {
		var de *mapstructure.DecodeError
		var pe *mapstructure.ParseError
		var ue *mapstructure.UnconvertibleTypeError
		switch {
		case errors.As(e, &de) && errors.As(de.Unwrap(), &pe):
			out = append(out, fmt.Sprintf("field %s: value %q is not a valid %s", de.Name(), fmt.Sprint(pe.Value), pe.Expected.Type()))
		case errors.As(e, &de) && errors.As(de.Unwrap(), &ue):
			out = append(out, fmt.Sprintf("field %s: value %v is a %T, want %s", de.Name(), ue.Value, ue.Value, ue.Expected.Type()))
		case errors.As(e, &de):
			out = append(out, fmt.Sprintf("field %s: %v", de.Name(), de.Unwrap()))
		default:
			if j, ok := e.(interface{ Unwrap() []error }); ok {
				for _, x := range j.Unwrap() {
					walk(x)
				}
				return
			}
			if w := errors.Unwrap(e); w != nil {
				walk(w)
				return
			}
			out = append(out, e.Error())
		}
	}
	walk(err)
	return errors.New(strings.Join(out, "; "))
}

// asMap is v as a string-keyed map (YAML may give map[any]any); nil → empty.
func asMap(v any) map[string]any {
	switch m := v.(type) {
	case map[string]any:
		return m
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, x := range m {
			out[fmt.Sprint(k)] = x
		}
		return out
	}
	return map[string]any{}
}

// settingPaths lists every overridable path: every field of the pool and
// judge configs (map fields under their known keys: rule names, intents),
// and every member field by index and by name.
func settingPaths(tree map[string]any) []string {
	keys := func(path string) []string {
		switch {
		case path == "judge.rules":
			var names []string
			for _, r := range judge.DefaultRules(judge.DefaultRuleParams()) {
				names = append(names, r.Name)
			}
			return names
		case path == "judge.rubrics" || path == "judge.params.max_chars":
			// The intents, and the judge's spellings of two of them
			// before the one vocabulary, which still name them.
			return append(vocab.Values(vocab.DimIntent), "optimise", "general")
		}
		return nil
	}
	var paths []string
	paths = append(paths, leafPaths(reflect.TypeFor[pool.Config](), "pool", keys)...)
	paths = append(paths, leafPaths(reflect.TypeFor[judge.Config](), "judge", keys)...)
	paths = append(paths, leafPaths(reflect.TypeFor[pool.MemberConfig](), "judge.endpoint", keys)...)
	members, _ := asMap(tree["pool"])["members"].([]any)
	for i, m := range members {
		ids := []string{strconv.Itoa(i)}
		if name, ok := asMap(m)["name"].(string); ok && name != "" {
			ids = append(ids, name)
		}
		for _, id := range ids {
			paths = append(paths, leafPaths(reflect.TypeFor[pool.MemberConfig](), "pool.members."+id, keys)...)
		}
	}
	return paths
}

// leafPaths lists the yaml paths of t's leaf fields under prefix. Fields
// tagged setting:"file" (a member's allow_key_env and allow_insecure) are
// left out: only a config file sets them, never a variable or --set.
func leafPaths(t reflect.Type, prefix string, keys func(string) []string) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	switch t.Kind() {
	case reflect.Map:
		for _, k := range keys(prefix) {
			out = append(out, leafPaths(t.Elem(), prefix+"."+k, keys)...)
		}
	case reflect.Slice:
		// members are listed by index and name by settingPaths
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			switch {
			case name == "-" || !f.IsExported() || f.Tag.Get("setting") == "file":
			case strings.Contains(opts, "squash"):
				out = append(out, leafPaths(f.Type, prefix, keys)...)
			default:
				out = append(out, leafPaths(f.Type, prefix+"."+name, keys)...)
			}
		}
	default:
		out = append(out, prefix)
	}
	return out
}

// deepCopy copies the maps and slices of a YAML-shaped value, so overrides
// never write into viper's own config.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any, map[any]any:
		out := map[string]any{}
		for k, e := range asMap(x) {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// setPath sets the value at a dotted path in the tree, creating maps on
// the way; pool.members.<index or name> selects a member.
func setPath(tree map[string]any, path, value string) error {
	parts := strings.Split(path, ".")
	if len(parts) < 2 || (parts[0] != "pool" && parts[0] != "judge") {
		return fmt.Errorf("path %q: want pool.… or judge.…", path)
	}
	cur := tree
	for i := 0; i < len(parts)-1; i++ {
		p := parts[i]
		if i == 1 && parts[0] == "pool" && p == "members" {
			m, err := member(cur, parts[2])
			if err != nil {
				return err
			}
			cur, i = m, i+1
			if i == len(parts)-1 {
				return fmt.Errorf("path %q names a member, not a field", path)
			}
			continue
		}
		next := asMap(cur[p])
		cur[p] = next
		cur = next
	}
	cur[parts[len(parts)-1]] = value
	return nil
}

// member finds pool.members[id] by index or name.
func member(pool map[string]any, id string) (map[string]any, error) {
	members, _ := pool["members"].([]any)
	for i, m := range members {
		mm := asMap(m)
		if strconv.Itoa(i) == id || mm["name"] == id {
			members[i] = mm
			return mm, nil
		}
	}
	return nil, fmt.Errorf("no pool member %q (members are chosen by index or name)", id)
}

// fileOnlyField is the last part of path when it names a field only a
// config file sets (tagged setting:"file"), else "".
func fileOnlyField(path string) string {
	last := strings.TrimSpace(path[strings.LastIndex(path, ".")+1:])
	t := reflect.TypeFor[pool.MemberConfig]()
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); name == last && f.Tag.Get("setting") == "file" {
			return name
		}
	}
	return ""
}

func envName(path string) string {
	return "DIALOGFARM_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(path))
}

// poolResponder is the pool-and-judge responder with what the run's end
// report needs.
type poolResponder struct {
	*respond.Responder
	pool       *pool.Pool
	judge      *judge.Judge
	judgeModel *pool.Member
}

// newPoolResponder builds the capture responder for drive --pool: the
// pool, the judge (rules-only when no judge endpoint is configured) and
// their composition. A relative cache_dir is resolved against runDir; the
// judge model shares the pool's cache. The API keys are read from the
// environment here.
func newPoolResponder(cfg poolSettings, runDir string, limits pool.Limits, log *zap.Logger) (*poolResponder, error) {
	if err := cfg.resolveKeys(true); err != nil {
		return nil, err
	}
	if cfg.Pool.CacheDir != "" && !filepath.IsAbs(cfg.Pool.CacheDir) {
		cfg.Pool.CacheDir = filepath.Join(runDir, cfg.Pool.CacheDir)
	}
	p, err := pool.New(cfg.Pool, log.Named("pool"), pool.WithLimits(limits))
	if err != nil {
		return nil, err
	}
	j, jm, err := newJudge(cfg, p.Cache(), limits, log)
	if err != nil {
		return nil, err
	}
	return &poolResponder{Responder: respond.New(p, j, log.Named("responder")), pool: p, judge: j, judgeModel: jm}, nil
}

// newJudge builds the judge and its model (nil in rules-only mode).
func newJudge(cfg poolSettings, cache *pool.Cache, limits pool.Limits, log *zap.Logger) (*judge.Judge, *pool.Member, error) {
	if cfg.JudgeModel == nil {
		log.Warn("no judge endpoint configured: rules-only mode, every verdict says so")
		j, err := judge.New(cfg.Judge, nil, log.Named("judge"))
		return j, nil, err
	}
	policy := cfg.Pool.Policy()
	policy.Limits = limits
	m, err := pool.NewMember(*cfg.JudgeModel, policy, cache, log.Named("judge"))
	if err != nil {
		return nil, nil, fmt.Errorf("judge endpoint: %w", err)
	}
	j, err := judge.New(cfg.Judge, m, log.Named("judge"))
	return j, m, err
}
