package main

// Strict configuration: every flag value comes from the command line, a
// DIALOGFARM_* environment variable or a top-level key of the config file,
// in that order of precedence. Values from the environment and the file are
// parsed by the flag itself, so a value that is not an int, float, bool or
// duration is an error naming where it came from, never a silent zero; a
// config file key that no command has is an error too.

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// configEnv names the config file when --config is not given.
const configEnv = "DIALOGFARM_CONFIG"

// notSettings are the flags no environment variable or config key sets.
var notSettings = []string{"help", "version", "config"}

// flagKey is the viper key (and config file key) of a flag: --pool names a
// file, so it is pool-file; the key "pool" is the config's pool: section.
func flagKey(name string) string {
	if name == "pool" {
		return "pool-file"
	}
	return name
}

// flagEnv is the environment variable of a flag: DIALOGFARM_MIN_SCORE for
// --min-score.
func flagEnv(name string) string {
	return "DIALOGFARM_" + strings.ToUpper(strings.ReplaceAll(flagKey(name), "-", "_"))
}

// readConfigFile reads the config file named by --config or, without it,
// by DIALOGFARM_CONFIG into v, and refuses keys no command knows.
func readConfigFile(cmd *cobra.Command, v *viper.Viper) (string, error) {
	path, _ := cmd.Flags().GetString("config")
	if path == "" {
		path = os.Getenv(configEnv)
	}
	if path == "" {
		return "", nil
	}
	v.SetConfigFile(path)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return "", fmt.Errorf("read config file %s: %w", path, err)
	}
	known := map[string]bool{"pool": true, "judge": true, allowKeyEnvKey: true, allowInsecureKey: true}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { known[flagKey(f.Name)] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { known[flagKey(f.Name)] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.Root())
	for _, n := range notSettings {
		delete(known, n)
	}
	var errs []error
	keys := make([]string, 0)
	for k := range v.AllSettings() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !known[k] {
			errs = append(errs, fmt.Errorf("config file %s: unknown key %q (top-level keys are flag names such as min-score, and the pool: and judge: sections)", path, k))
		}
	}
	return path, errors.Join(errs...)
}

// applySettings gives every flag of cmd not set on the command line its
// value from the environment or, failing that, from the config file in
// file (read from path), parsed and checked by the flag. A flag so set
// counts as changed, so viper takes its typed value. The values meant for
// other commands' flags are checked too, so a bad one is refused whichever
// command runs: a name that two commands give different types (a string
// --json here, a bool there) only has to suit one of them.
func applySettings(cmd *cobra.Command, file *viper.Viper, path string) error {
	var errs []error
	mine := map[string]bool{}
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		mine[f.Name] = true
		if err := applySetting(f, file, path); err != nil {
			errs = append(errs, err)
		}
	})
	others := map[string][]*pflag.Flag{}
	var names []string
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c != cmd {
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !mine[f.Name] {
					if others[f.Name] == nil {
						names = append(names, f.Name)
					}
					others[f.Name] = append(others[f.Name], f)
				}
			})
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.Root())
	for _, name := range names {
		var first error
		for _, f := range others[name] {
			err := applySetting(f, file, path)
			if err == nil {
				first = nil
				break
			}
			if first == nil {
				first = err
			}
		}
		if first != nil {
			errs = append(errs, first)
		}
	}
	return errors.Join(errs...)
}

// applySetting sets one flag from the environment or the config file.
func applySetting(f *pflag.Flag, file *viper.Viper, path string) error {
	if f.Changed || slices.Contains(notSettings, f.Name) {
		return nil
	}
	var err error
	if val := os.Getenv(flagEnv(f.Name)); val != "" {
		if err = setFlag(f, []string{val}, false); err != nil {
			return fmt.Errorf("environment variable %s=%q: %w", flagEnv(f.Name), val, err)
		}
	} else if key := flagKey(f.Name); path != "" && file.InConfig(key) {
		raw := file.Get(key)
		vals, list, verr := configValues(raw)
		if err = verr; err == nil {
			err = setFlag(f, vals, list)
		}
		if err != nil {
			return fmt.Errorf("config file %s: key %s: value %s: %w", path, key, describe(raw), err)
		}
	} else {
		return nil
	}
	f.Changed = true
	return nil
}

// setFlag parses vals into f: one value, or a YAML list for a list flag.
func setFlag(f *pflag.Flag, vals []string, list bool) error {
	sv, isSlice := f.Value.(pflag.SliceValue)
	switch {
	case list && !isSlice:
		return fmt.Errorf("--%s takes one %s, not a list", f.Name, f.Value.Type())
	case list:
		return sv.Replace(vals)
	}
	if err := f.Value.Set(vals[0]); err != nil {
		if re := (*rangeError)(nil); errors.As(err, &re) {
			return err
		}
		return fmt.Errorf("not a valid %s for --%s: %w", f.Value.Type(), f.Name, unwrapParse(err))
	}
	return nil
}

// configValues turns a YAML value into flag text: a scalar gives one
// value, a list its items; a mapping is refused.
func configValues(raw any) ([]string, bool, error) {
	switch x := raw.(type) {
	case nil:
		return []string{""}, false, nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			switch e.(type) {
			case []any, map[string]any, map[any]any:
				return nil, true, errors.New("a list item is not a single value")
			}
			out[i] = fmt.Sprint(e)
		}
		return out, true, nil
	case map[string]any, map[any]any:
		return nil, false, errors.New("want a single value or a list, got a mapping")
	}
	return []string{fmt.Sprint(raw)}, false, nil
}

// describe quotes a config value for an error message.
func describe(raw any) string {
	if s, ok := raw.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%v", raw)
}

// unwrapParse shortens strconv's "strconv.ParseFloat: parsing "x": invalid
// syntax" to "invalid syntax": the value is already in the message.
func unwrapParse(err error) error {
	var ne interface{ Unwrap() error }
	if errors.As(err, &ne) && ne.Unwrap() != nil {
		return ne.Unwrap()
	}
	return err
}
