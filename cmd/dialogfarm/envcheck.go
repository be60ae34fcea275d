package main

// Every DIALOGFARM_* environment variable must name a setting: a flag of
// some command (DIALOGFARM_MIN_SCORE), a pool or judge field
// (DIALOGFARM_JUDGE_ENDPOINT_MODEL), DIALOGFARM_CONFIG, a variable an
// api_key_env names, or one of dialogfarm's own scripts' (toolEnv). Any
// other is a typo that would silently keep a default, so it is an error
// naming the closest setting.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// toolEnv are the DIALOGFARM_* variables of the project's scripts and
// tests (the tools folder of scripts/setup.sh, make chaos, the Python
// tracer), which reach the CLI when it runs under them.
var toolEnv = []string{
	"DIALOGFARM_TOOLS", "DIALOGFARM_CHAOS_KILLS", "DIALOGFARM_CHAOS_SEED", "DIALOGFARM_CHAOS_CLUSTER",
	"DIALOGFARM_TRACE_ROOT", "DIALOGFARM_TRACE_OUT", "DIALOGFARM_TRACE_CALLS",
}

// settingEnvs lists the variables that set something: every flag of every
// command, every pool and judge field of the settings given (their members
// by index and name), DIALOGFARM_CONFIG and toolEnv.
func settingEnvs(root *cobra.Command, settings ...poolSettings) []string {
	known := append([]string{configEnv}, toolEnv...)
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		visit := func(f *pflag.Flag) {
			if !slices.Contains(notSettings, f.Name) {
				known = append(known, flagEnv(f.Name))
			}
		}
		c.Flags().VisitAll(visit)
		c.PersistentFlags().VisitAll(visit)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, s := range settings {
		var members []any
		for _, m := range s.Pool.Members {
			members = append(members, map[string]any{"name": m.Name})
		}
		for _, p := range settingPaths(map[string]any{"pool": map[string]any{"members": members}}) {
			known = append(known, envName(p))
		}
	}
	slices.Sort(known)
	return slices.Compact(known)
}

// unknownEnv refuses the DIALOGFARM_* variables of environ that are neither
// in known nor named by an api_key_env (keyEnvs), each with the closest
// known name.
func unknownEnv(environ, known, keyEnvs []string) error {
	var errs []error
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "DIALOGFARM_") || slices.Contains(known, k) || slices.Contains(keyEnvs, k) {
			continue
		}
		if fileOnlyEnv(k) {
			errs = append(errs, fmt.Errorf("environment variable %s: allow_key_env, allow_insecure, allow-key-env and allow-insecure-hosts are set in a config file only, never by a variable", k))
			continue
		}
		msg := fmt.Sprintf("environment variable %s names no setting", k)
		if c := closestEnv(k, known); c != "" {
			msg += "; did you mean " + c + "?"
		} else {
			msg += " (a flag --NAME of any command is DIALOGFARM_NAME; a pool or judge field is DIALOGFARM_POOL_… or DIALOGFARM_JUDGE_…)"
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// fileOnlyEnv reports whether k would set a key exemption, which only a
// config file may.
func fileOnlyEnv(k string) bool {
	for _, s := range []string{"_ALLOW_KEY_ENV", "_ALLOW_INSECURE", "_ALLOW_INSECURE_HOSTS"} {
		if strings.HasSuffix(k, s) {
			return true
		}
	}
	return false
}

// closestEnv is the known name nearest to k by edit distance after the
// DIALOGFARM_ prefix, "" when none is near enough to be a typo of it
// (within a third of its length).
func closestEnv(k string, known []string) string {
	name := strings.TrimPrefix(k, "DIALOGFARM_")
	best, bestD := "", len(name)/3+1
	for _, n := range known {
		if d := levenshtein.ComputeDistance(name, strings.TrimPrefix(n, "DIALOGFARM_")); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}
